/// \file
/// What session 25's standalone prototypes under bench/results/h100/ share (not part of the
/// library or the bench): a CUDA error check that exits, the bench's fill of fresh standard
/// normals (fused_bench.cu's, zeros not replaced), and CUB's functor over cuact's op (bench/
/// ops_impl.cuh's cub_op), their timing (round-robin or each contestant in a row), their
/// check of each contestant's output against a reference contestant's, their banner and rows,
/// and a bitwise comparison of two activations over every 16-bit input; session 36's fill of ones
/// and its calls in a row after other work. The prototypes were run with these definitions
/// inline.
#pragma once

#include <cub/device/device_transform.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>
#include <cuact/cuact.cuh>

#define CK(x)                                                                \
  do {                                                                       \
    cudaError_t e_ = (x);                                                    \
    if (e_ != cudaSuccess) {                                                 \
      std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                          \
    }                                                                        \
  } while (0)

namespace cd = cuact::detail;

__device__ __host__ inline std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Standard normal values (Box-Muller on a counter hash); exact zeros become 2^-10.
template <class T>
__global__ void fill_normal(T* out, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const std::uint64_t h = mix(seed ^ mix(i));
    const float u1 = (static_cast<float>(h >> 40) + 1.0f) * 0x1p-24f;
    const float u2 = static_cast<float>(h & 0xffffff) * 0x1p-24f;
    float v = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
    if (v == 0.0f) v = 0x1p-10f;
    out[i] = cd::from_compute<T>(v);
  }
}

/// CUB's functor: cuact's op between cuact's conversions (storage -> compute -> storage).
template <class Op, class Out>
struct cub_op {
  Op op;
  template <class... S>
  __host__ __device__ Out operator()(S... v) const {
    return cd::from_compute<Out>(op(cd::to_compute(v)...));
  }
};

/// One contestant of a round-robin timing: its name, what it launches, its times (ms).
struct V {
  std::string name;
  std::function<void()> f;
  std::vector<float> ms;
};

/// Times `reps` calls of each contestant (CUDA events on the default stream), each the third of
/// three back-to-back calls of it, the first two warming it: `round_robin`, one such call per
/// contestant in turn, `reps` rounds; else each contestant's calls in a row (two warm-up calls,
/// then `reps` timed alone: the bench's --family method).
inline void time_contestants(std::vector<V>& vs, int reps, bool round_robin) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  const auto timed = [&](V& v) {
    cudaEventRecord(e0);
    v.f();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    v.ms.push_back(ms);
  };
  if (round_robin) {
    for (int round = 0; round < reps; ++round)
      for (auto& v : vs) {
        v.f();
        v.f();
        timed(v);
      }
  } else {
    for (auto& v : vs) {
      v.f();
      v.f();
      for (int rep = 0; rep < reps; ++rep) timed(v);
    }
  }
  CK(cudaGetLastError());
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
}

/// `reps` rounds over every contestant in turn (time_contestants).
inline void time_round_robin(std::vector<V>& vs, int reps) { time_contestants(vs, reps, true); }

/// Checks that every contestant from vs[first] on writes what vs[reference] writes: the last
/// `check_bytes` bytes of the `out_bytes` at `out`, each contestant run once after `out` is
/// filled with 0xff bytes; prints those that differ, labelled `label`.
inline void check_contestants(std::vector<V>& vs, std::size_t reference, std::size_t first,
                              void* out, std::size_t out_bytes, std::size_t check_bytes,
                              const std::string& label) {
  std::vector<unsigned char> ref(check_bytes), got(check_bytes);
  const char* tail = static_cast<const char*>(out) + out_bytes - check_bytes;
  vs[reference].f();
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(ref.data(), tail, check_bytes, cudaMemcpyDeviceToHost));
  for (std::size_t i = first; i < vs.size(); ++i) {
    CK(cudaMemset(out, 0xff, out_bytes));
    vs[i].f();
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(got.data(), tail, check_bytes, cudaMemcpyDeviceToHost));
    if (got != ref) {
      std::printf("  %s: %s DIFFERS from %s\n", label.c_str(), vs[i].name.c_str(),
                  vs[reference].name.c_str());
    }
  }
}

/// The contestants a forward's prototype starts with, in this order (check_contestants' reference
/// is index 1): "memcpy" (of x's bytes into copy_dst), "cuact" (cuact::forward) and "cub"
/// (cub::DeviceTransform with cuact's functor).
template <class A, class T>
std::vector<V> forward_references(const T* x, T* out, T* copy_dst, std::size_t n) {
  using op_t = cuact::forward_op<A, T>;
  const op_t op{{}, A{}};
  std::vector<V> vs;
  vs.push_back({"memcpy",
                [=] { cudaMemcpyAsync(copy_dst, x, n * sizeof(T), cudaMemcpyDeviceToDevice); },
                {}});
  vs.push_back({"cuact", [=] { CK(cuact::forward(A{}, x, out, n)); }, {}});
  vs.push_back({"cub",
                [=] {
                  CK(cub::DeviceTransform::Transform(::cuda::std::make_tuple(x), out,
                                                     std::int64_t(n), cub_op<op_t, T>{op}));
                },
                {}});
  return vs;
}

/// The median of `m` (the upper one of an even count).
inline float med(std::vector<float> m) {
  std::sort(m.begin(), m.end());
  return m[m.size() / 2];
}

/// Writes 0x01 over `n` bytes (a multiple of 16), 16 at a time: what PyTorch's timer runs before
/// each timed call (`flush.fill_(1)`), for the session 36 probes of the work before a kernel.
__global__ void fill_ones_kernel(unsigned char* p, std::size_t n) {
  for (std::size_t i = (blockIdx.x * std::size_t(blockDim.x) + threadIdx.x) * 16; i < n;
       i += std::size_t(gridDim.x) * blockDim.x * 16)
    *reinterpret_cast<uint4*>(p + i) =
        make_uint4(0x01010101u, 0x01010101u, 0x01010101u, 0x01010101u);
}

/// Two calls of `pre`, then `calls` calls of `timed` in a row on the legacy default stream, each
/// between two events; returns each timed call's ms (the session 36 probes of the work before a
/// kernel).
template <class Pre, class Timed>
std::vector<float> time_in_a_row(Pre pre, Timed timed, int calls) {
  std::vector<cudaEvent_t> ev(calls + 1);
  for (auto& e : ev) CK(cudaEventCreate(&e));
  pre();
  pre();
  for (int c = 0; c < calls; ++c) {
    CK(cudaEventRecord(ev[c]));
    timed();
  }
  CK(cudaEventRecord(ev[calls]));
  CK(cudaEventSynchronize(ev[calls]));
  std::vector<float> ms(calls);
  for (int c = 0; c < calls; ++c) CK(cudaEventElapsedTime(&ms[c], ev[c], ev[c + 1]));
  for (auto& e : ev) CK(cudaEventDestroy(e));
  return ms;
}

/// The median of calls 3-12 of twelve calls of `timed` in a row after two of `pre`
/// (time_in_a_row): a kernel's steady time after some other work.
template <class Pre, class Timed>
float steady_ms(Pre pre, Timed timed) {
  const std::vector<float> t = time_in_a_row(pre, timed, 12);
  return med(std::vector<float>(t.begin() + 2, t.end()));
}

/// The banner of a round-robin prototype at 4096 x 393216 elements: the device, the rounds.
inline void print_round_robin_banner(int reps) {
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, n = 4096 x 393216, %d round-robin rounds, medians; x memcpy (same bytes)\n",
              prop.name, reps);
}

/// One row: vs[0]'s (memcpy's) median, then every other contestant's speed against it.
inline void print_ratios(const char* name, const std::vector<V>& vs) {
  const double copy = med(vs[0].ms);
  std::printf("%-6s memcpy %.4f ms |", name, copy);
  for (std::size_t i = 1; i < vs.size(); ++i)
    std::printf(" %s %.4f", vs[i].name.c_str(), copy / med(vs[i].ms));
  std::printf("\n");
}

/// One line per contestant: its median time, its GB/s for bytes_of(i) bytes moved and that over
/// vs[0]'s (memcpy's, bytes_of(0)) median GB/s, with the range over the rounds in parentheses.
template <class Bytes>
void print_gbs_against_copy(const std::vector<V>& vs, Bytes bytes_of) {
  const double copy_gbs = double(bytes_of(std::size_t(0))) / med(vs[0].ms) / 1e6;
  for (std::size_t i = 0; i < vs.size(); ++i) {
    const double b = double(bytes_of(i));
    const auto [lo, hi] = std::minmax_element(vs[i].ms.begin(), vs[i].ms.end());
    const double gbs = b / med(vs[i].ms) / 1e6;
    std::printf("%-9s %.4f ms  %7.1f GB/s  x memcpy %.3f  (%.3f..%.3f)\n", vs[i].name.c_str(),
                med(vs[i].ms), gbs, gbs / copy_gbs, b / *hi / 1e6 / copy_gbs,
                b / *lo / 1e6 / copy_gbs);
  }
}

/// The arrays of session 36's state probes (bench/results/h200/*_s36.cu): n = 4096 x 393216
/// elements of T in x (standard normal, seed 36), y and dst, with `second_pair` also x2 (seed 37)
/// and y2 (allocated between y and dst), and the 128 MiB buffer flush_l2() fills as PyTorch's L2
/// flush does.
template <class T>
struct state_probe_arrays {
  static constexpr std::size_t n = std::size_t(4096) * 393216, flush_bytes = 128 << 20;
  T *x = nullptr, *y = nullptr, *x2 = nullptr, *y2 = nullptr, *dst = nullptr;
  unsigned char* flush = nullptr;

  explicit state_probe_arrays(bool second_pair = false) {
    for (T** p : {&x, &y}) CK(cudaMalloc(p, n * sizeof(T)));
    if (second_pair) {
      for (T** p : {&x2, &y2}) CK(cudaMalloc(p, n * sizeof(T)));
    }
    CK(cudaMalloc(&dst, n * sizeof(T)));
    CK(cudaMalloc(&flush, flush_bytes));
    fill_normal<<<4096, 256>>>(x, n, 36);
    if (second_pair) fill_normal<<<4096, 256>>>(x2, n, 37);
    CK(cudaDeviceSynchronize());
  }
  /// The fill kernel over the flush buffer (PyTorch's L2 flush before a timed call).
  void flush_l2() const { fill_ones_kernel<<<1056, 256>>>(flush, flush_bytes); }
  /// x copied to dst.
  void copy() const { CK(cudaMemcpyAsync(dst, x, n * sizeof(T), cudaMemcpyDeviceToDevice)); }
};

/// The arrays of a relu_forward_mask prototype over n elements of T: x (standard normal from
/// `seed`), y (64 bytes over), the mask's n / 8 bytes, and memcpy's buffers for the same total
/// bytes (`moved`: read x, write y and the mask; copy_src filled from seed + 1), allocated in that
/// order; freed on destruction. Session 38's mask16_s38.cu and mask_s38.cu ran with them inline,
/// y without the 64 bytes.
template <class T>
struct typed_mask_arrays {
  std::size_t n, bytes, moved;
  T *x = nullptr, *y = nullptr;
  std::uint32_t* mask = nullptr;
  char *copy_src = nullptr, *copy_dst = nullptr;

  typed_mask_arrays(std::size_t elements, unsigned seed)
      : n(elements), bytes(elements / 8), moved(elements * 2 * sizeof(T) + elements / 8) {
    CK(cudaMalloc(&x, n * sizeof(T)));
    CK(cudaMalloc(&y, n * sizeof(T) + 64));
    CK(cudaMalloc(&mask, bytes));
    CK(cudaMalloc(&copy_src, moved / 2 + 64));
    CK(cudaMalloc(&copy_dst, moved / 2 + 64));
    fill_normal<<<4096, 256>>>(x, n, seed);
    fill_normal<<<4096, 256>>>(reinterpret_cast<float*>(copy_src), moved / 8, seed + 1);
    CK(cudaDeviceSynchronize());
  }
  ~typed_mask_arrays() {
    cudaFree(x);
    cudaFree(y);
    cudaFree(mask);
    cudaFree(copy_src);
    cudaFree(copy_dst);
  }
  typed_mask_arrays(const typed_mask_arrays&) = delete;
  typed_mask_arrays& operator=(const typed_mask_arrays&) = delete;
  /// "memcpy": half of `moved` from copy_src to copy_dst (as many bytes read as written).
  V memcpy_contestant() const {
    char *from = copy_src, *to = copy_dst;
    const std::size_t half = moved / 2;
    return {"memcpy", [=] { cudaMemcpyAsync(to, from, half, cudaMemcpyDeviceToDevice); }, {}};
  }
};

/// The fp32 relu_forward_mask prototypes' arrays (sessions 35 and 37: 4096 x 393216 elements, a
/// multiple of 1024: whole tiles and blocks only), their first contestants and their run.
struct mask_probe : typed_mask_arrays<float> {
  explicit mask_probe(unsigned seed) : typed_mask_arrays<float>(std::size_t(4096) * 393216, seed) {}
  /// The first two contestants: "memcpy" (of `moved` bytes) and "library"
  /// (cuact::relu_forward_mask), the reference of run()'s checks.
  std::vector<V> first_contestants() const {
    float *in = x, *out = y;
    std::uint32_t* bits = mask;
    const std::size_t elements = n;
    return {memcpy_contestant(),
            {"library", [=] { CK(cuact::relu_forward_mask(in, out, bits, elements)); }, {}}};
  }
  /// Checks every contestant after "library" against it (the mask for those before
  /// `without_mask`, y's last 64 MiB for all), times them all in `reps` round-robin rounds and
  /// prints each against memcpy, the mask's bytes counted where a contestant writes it.
  void run(std::vector<V>& vs, std::size_t without_mask, int reps = 15) const {
    std::vector<V> mask_check(vs.begin() + 1, vs.begin() + without_mask);
    check_contestants(mask_check, 0, 1, mask, bytes, bytes, "mask");
    std::vector<V> y_check(vs.begin() + 1, vs.end());
    check_contestants(y_check, 0, 1, y, n * 4, 1 << 26, "y (last 64 MiB)");
    time_round_robin(vs, reps);
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    std::printf("%s, fp32 n = 4096 x 393216, %d round-robin rounds, medians (min..max)\n",
                prop.name, reps);
    const std::size_t unmasked = n * 8, all = moved;
    print_gbs_against_copy(vs, [=](std::size_t i) { return i >= without_mask ? unmasked : all; });
  }
};

/// Runs `reference` and `candidate` through cuact::forward over every 16-bit pattern of T and
/// prints how many of their outputs differ bitwise, labelled `label`.
template <class T, class Reference, class Candidate>
void compare_every_16bit_input(const char* label, Reference reference, Candidate candidate) {
  static_assert(sizeof(T) == 2, "cuact prototypes: a 16-bit type");
  const std::size_t n = 65536;
  std::vector<std::uint16_t> bits(n), want(n), got(n);
  for (std::size_t i = 0; i < n; ++i) bits[i] = static_cast<std::uint16_t>(i);
  T *x, *a, *b;
  CK(cudaMalloc(&x, n * sizeof(T)));
  CK(cudaMalloc(&a, n * sizeof(T)));
  CK(cudaMalloc(&b, n * sizeof(T)));
  CK(cudaMemcpy(x, bits.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  CK(cuact::forward(reference, x, a, n));
  CK(cuact::forward(candidate, x, b, n));
  CK(cudaMemcpy(want.data(), a, n * sizeof(T), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(got.data(), b, n * sizeof(T), cudaMemcpyDeviceToHost));
  std::size_t differ = 0;
  for (std::size_t i = 0; i < n; ++i) differ += want[i] != got[i];
  std::printf("%s: all 65536 inputs, %zu outputs differ\n", label, differ);
  CK(cudaFree(x));
  CK(cudaFree(a));
  CK(cudaFree(b));
}
