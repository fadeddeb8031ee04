// Shared by cuact's GPU tests and the CPU fuzz: CUDA checks, device memory, a guarded arena that
// batches many cases into one allocation, pools of random inputs with precomputed references, a
// hash-based generator that gives the same value for an index on host and device, and the
// harnesses that run elementwise and ReLU-mask cases through any launch path.
//
// Include from .cu files only: it defines (template) kernels.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuact/cuact.cuh>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "test_support.hpp"

namespace cuact_test {

// ---- CUDA checks and environment ------------------------------------------------------------

#define CUACT_CUDA_REQUIRE(call)                              \
  do {                                                        \
    const cudaError_t cuact_status_ = (call);                 \
    INFO(#call << " -> " << cudaGetErrorName(cuact_status_)); \
    REQUIRE(cuact_status_ == cudaSuccess);                    \
  } while (0)

/// CUACT_TEST_QUICK=1 (set by tests/sanitize.sh) shrinks sizes and matrices: sanitizers slow
/// kernels and API calls by 10-100x.
inline bool quick_mode() {
  const char* v = std::getenv("CUACT_TEST_QUICK");
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

inline std::uint64_t env_u64(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoull(v, nullptr, 0);
}

// ---- memory ---------------------------------------------------------------------------------

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

/// Page-locked host bytes (fast device-to-host copies), freed on scope exit.
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

template <class T>
void upload(T* device, const std::vector<T>& host) {
  CUACT_CUDA_REQUIRE(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
}

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
    if (used_ != 0) CUACT_CUDA_REQUIRE(cudaMemcpy(host_.get(), device_.get(), used_, cudaMemcpyDeviceToHost));
  }
  template <class T>
  const T* host(std::size_t id) const {
    return reinterpret_cast<const T*>(host_.get() + slots_[id].data);
  }
  /// The bytes around the slot's data still hold the sentinel.
  bool guards_intact(std::size_t id) const {
    const slot& s = slots_[id];
    const unsigned char* h = host_.get();
    for (std::size_t b = s.begin; b < s.data; ++b) {
      if (h[b] != sentinel) return false;
    }
    for (std::size_t b = s.data + s.bytes; b < s.end; ++b) {
      if (h[b] != sentinel) return false;
    }
    return true;
  }

 private:
  std::vector<slot> slots_;
  std::size_t used_ = 0;
  device_memory device_;
  pinned_memory host_;
};

// ---- references -----------------------------------------------------------------------------

/// Float64 references for what the tests compare against, evaluated in long double where float64
/// alone would not be accurate enough for T = double:
///  - selu and its gradient: expm1 and exp in float64 are themselves ~1 ulp off, and the chain
///    scale * alpha * expm1(x) adds two more roundings; against a double result with a 4-ulp
///    budget that reference error matters (measured: 3 ulp from the float64 reference, 2 from this).
///  - the gradient from the output: y + scale * alpha cancels for y near -scale * alpha (the
///    forward gives exactly y = -scale_alpha_hi for x < -38 in double); scale * alpha is carried
///    as a double-double (hi + lo, computed independently with Python's decimal at 80 digits, and
///    equal to cuact::selu's constants), and y + hi is exact there (Sterbenz), so nothing is lost.
/// For float and 16-bit T these agree with test_support's float64 references to well under an ulp.
namespace precise {
constexpr double sa_hi = 0x1.c212cc640f031p+0;
constexpr double sa_lo = 0x1.05161b045a1fep-56;
constexpr long double scale = 1.0507009873554804934193349852946L;
inline long double scale_alpha() {
  return static_cast<long double>(sa_hi) + sa_lo;
}

inline double selu(double x) {
  if (std::isnan(x)) return x;
  return x > 0 ? static_cast<double>(scale * x) : static_cast<double>(scale_alpha() * std::expm1l(x));
}
/// dy * selu'(x). C is the compute type: exp(x) below half of C's smallest denormal is 0 in C,
/// and then an infinite dy gives NaN (inf * 0) as in PyTorch (the rule of test_support's
/// selu_grad_ref<C>).
template <class C>
double selu_grad(double x, double dy) {
  if (!(x <= 0)) return static_cast<double>(dy * scale);  // NaN x takes this branch, like cuact
  long double e = std::exp(static_cast<long double>(x));
  if (e < static_cast<long double>(std::numeric_limits<C>::denorm_min()) / 2) e = 0;
  return static_cast<double>(dy * (scale_alpha() * e));
}
/// dy * selu'(x) given y = selu(x): y <= 0 ? dy * (y + scale * alpha) : dy * scale.
inline double selu_grad_from_output(double y, double dy) {
  if (!(y <= 0)) return static_cast<double>(dy * scale);
  const long double d = (static_cast<long double>(y) + sa_hi) + sa_lo;
  return static_cast<double>(dy * d);
}
}  // namespace precise

/// A user-defined activation with a parameter and no derivative: it must run forward. The slope has
/// 3 significant bits, so slope * x is exact in float for every 16-bit x and needs one rounding in
/// float or double: the result is correctly rounded for every type, and the test asks for 0 ulp.
struct leaky_relu {
  float slope = 0.3125f;
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x > C(0) ? x : C(slope) * x;
  }
};
inline double leaky_relu_ref(double x) {
  return x > 0 ? x : 0.3125 * x;
}

/// The spacing of T at v: ulp(v) for finite v (the smallest denormal at zero).
template <class T>
double ulp_of(T v) {
  constexpr int m = mantissa_bits<T>(), e = exponent_bits<T>();
  constexpr int bias = (1 << (e - 1)) - 1;
  const auto b = bits_of(v);
  const int exponent = static_cast<int>((b >> m) & ((bits_t<T>(1) << e) - 1));
  return std::ldexp(1.0, (exponent == 0 ? 1 : exponent) - bias - m);
}

/// `actual` matches `reference`: NaN only for NaN; within `slack` (absolute, finite references
/// only); zeros and infinities bit-exact when max_ulp == 0 (sign of zero included), infinities
/// always exact; otherwise within max_ulp of the correctly rounded reference.
///
/// test_support's matches() tests `|actual - reference| <= abs_tolerance` before the zero rule, so
/// with the default abs_tolerance = 0 an actual -0 against a reference +0 passes (|-0 - 0| = 0):
/// it no longer checks the sign of zero, and with an infinite slack (dy = inf) any finite value
/// passes against an infinite reference. This one keeps both checks.
template <class T>
bool matches_strictly(T actual, double reference, int max_ulp, double slack = 0) {
  if (std::isnan(reference)) return is_nan(actual);
  if (is_nan(actual)) return false;
  if (slack > 0 && std::isfinite(reference) && std::fabs(to_double(actual) - reference) <= slack) {
    return true;
  }
  const T expected = round_to<T>(reference);
  const double e = to_double(expected);
  if (e == 0 || std::isinf(e)) {
    if (max_ulp == 0 || std::isinf(e)) return bits_of(actual) == bits_of(expected);
  }
  return ulp_distance(actual, expected) <= max_ulp;
}

template <class T>
std::string describe(T v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.9g (0x%llx)", to_double(v),
                static_cast<unsigned long long>(bits_of(v)));
  return buffer;
}

// ---- hash-based values: the same value for index i on host and device --------------------------

template <class T>
struct format_of {
  static constexpr int m = std::is_same_v<T, __half>          ? 10
                           : std::is_same_v<T, __nv_bfloat16> ? 7
                           : std::is_same_v<T, float>         ? 23
                                                              : 52;
  static constexpr int e = 8 * static_cast<int>(sizeof(T)) - 1 - m;
};

__host__ __device__ inline std::uint64_t mix64(std::uint64_t z) {  // splitmix64's finalizer
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The bits of element i's value: integer arithmetic only, so host and device agree exactly.
/// 1/64 special values (NaN with payload, +-inf, +-0, denormals, +-max, +-min normal, [64, 128)),
/// 3/64 any finite binade (denormals to the largest), the rest of magnitude in [2^-8, 16).
template <class T>
__host__ __device__ inline bits_t<T> hash_bits(std::uint64_t seed, std::uint64_t i) {
  constexpr int m = format_of<T>::m, e = format_of<T>::e;
  constexpr std::uint64_t bias = (std::uint64_t(1) << (e - 1)) - 1;
  constexpr std::uint64_t emax = (std::uint64_t(1) << e) - 1;
  constexpr std::uint64_t mant_mask = (std::uint64_t(1) << m) - 1;
  const std::uint64_t h = mix64(seed ^ mix64(i));
  const std::uint64_t sign = h >> 63;
  std::uint64_t mant = mix64(h) & mant_mask;
  std::uint64_t exponent;
  const unsigned select = static_cast<unsigned>(h & 63);
  if (select == 0) {
    switch ((h >> 8) % 8) {
      case 0:  // quiet NaN, random payload
        exponent = emax;
        mant |= std::uint64_t(1) << (m - 1);
        break;
      case 1:  // inf
        exponent = emax;
        mant = 0;
        break;
      case 2:  // zero
        exponent = 0;
        mant = 0;
        break;
      case 3:  // denormal (or zero)
        exponent = 0;
        break;
      case 4:  // max finite
        exponent = emax - 1;
        mant = mant_mask;
        break;
      case 5:  // min normal
        exponent = 1;
        mant = 0;
        break;
      case 6:  // min denormal
        exponent = 0;
        mant = 1;
        break;
      default:  // [64, 128)
        exponent = bias + 6;
        break;
    }
  } else if (select < 4) {
    exponent = (h >> 8) % emax;  // every finite binade
  } else {
    exponent = bias - 8 + (h >> 8) % 12;  // [2^-8, 16)
  }
  return static_cast<bits_t<T>>((sign << (8 * sizeof(T) - 1)) | (exponent << m) | mant);
}
template <class T>
T hash_value(std::uint64_t seed, std::uint64_t i) {
  return from_bits<T>(hash_bits<T>(seed, i));
}

template <class T>
__global__ void fill_hash_kernel(T* out, std::size_t n, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    reinterpret_cast<bits_t<T>*>(out)[i] = hash_bits<T>(seed, i);
  }
}
/// out[i] = hash_value<T>(seed, i) for i in [0, n), on the device.
template <class T>
void fill_hash(T* out, std::size_t n, std::uint64_t seed) {
  fill_hash_kernel<<<4096, 256>>>(out, n, seed);
  CUACT_CUDA_REQUIRE(cudaGetLastError());
}

template <class T>
__global__ void gather_kernel(const T* src, const std::size_t* index, T* dst, std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t k = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < count;
       k += stride) {
    reinterpret_cast<bits_t<T>*>(dst)[k] = reinterpret_cast<const bits_t<T>*>(src)[index[k]];
  }
}
/// host[k] = src[index[k]]: a sparse sample of a huge device array in one copy.
template <class T>
std::vector<T> gather(const T* src, const std::vector<std::size_t>& index) {
  device_memory d_index(index.size() * sizeof(std::size_t)), d_out(index.size() * sizeof(T));
  CUACT_CUDA_REQUIRE(
      cudaMemcpy(d_index.get(), index.data(), index.size() * sizeof(std::size_t), cudaMemcpyHostToDevice));
  gather_kernel<<<1024, 256>>>(src, d_index.get<std::size_t>(), d_out.get<T>(), index.size());
  CUACT_CUDA_REQUIRE(cudaGetLastError());
  std::vector<T> out(index.size());
  CUACT_CUDA_REQUIRE(cudaMemcpy(out.data(), d_out.get(), out.size() * sizeof(T), cudaMemcpyDeviceToHost));
  return out;
}

// ---- operations under test ------------------------------------------------------------------

enum class op_id : int {
  relu,           // forward
  selu,           // forward
  leaky,          // forward, user-defined activation without derivative
  relu_grad,      // backward(relu, x, dy)
  selu_grad,      // backward(selu, x, dy)
  relu_grad_out,  // backward_from_output(relu, y, dy)
  selu_grad_out,  // backward_from_output(selu, y, dy)
  count
};
inline const char* op_name(op_id op) {
  static const char* const names[] = {"relu",
                                      "selu",
                                      "leaky_relu",
                                      "relu backward",
                                      "selu backward",
                                      "relu backward_from_output",
                                      "selu backward_from_output"};
  return names[static_cast<int>(op)];
}
inline int op_inputs(op_id op) {
  return op < op_id::relu_grad ? 1 : 2;
}

/// Tolerance in ulp of T: relu and leaky relu are exact (0 ulp, sign of zero included); selu
/// forward and both selu gradients within selu_max_ulp<T>() (4 for fp32/fp64, 1 for 16-bit). The
/// from-input selu gradient also admits |dy| * 2 * denorm_min(C) (test_support's underflow_slack):
/// for x below about -87 (float) exp(x) is a denormal of C with few significant bits, and dy
/// scales that absolute error. The from-output gradient is compared with the reference computed
/// from the same rounded y (precise::selu_grad_from_output), so y's own rounding is not an error of
/// the kernel; the forward/from-output consistency test covers it.
template <class T>
int op_max_ulp(op_id op) {
  switch (op) {
    case op_id::selu:
    case op_id::selu_grad:
    case op_id::selu_grad_out:
      return selu_max_ulp<T>();
    default:
      return 0;
  }
}

/// Float64 reference of op at (a, b): a is x (or y for the from-output ops), b is dy.
template <class T>
double op_reference(op_id op, double a, double b) {
  using C = cuact::detail::compute_t<T>;
  switch (op) {
    case op_id::relu:
      return relu_ref(a);
    case op_id::selu:
      return precise::selu(a);
    case op_id::leaky:
      return leaky_relu_ref(a);
    case op_id::relu_grad:
      return relu_grad_ref(a, b);
    case op_id::selu_grad:
      return precise::selu_grad<C>(a, b);
    case op_id::relu_grad_out:
      return relu_grad_ref(a, b);  // y > 0 exactly where x > 0
    case op_id::selu_grad_out:
      return precise::selu_grad_from_output(a, b);
    default:
      return 0;
  }
}
template <class T>
double op_slack(op_id op, double dy) {
  return op == op_id::selu_grad ? underflow_slack<cuact::detail::compute_t<T>>(dy) : 0.0;
}

// ---- pools of inputs with precomputed references ----------------------------------------------

/// Two arrays of random_values (a: x or y, b: dy) on host and device, and per op the reference,
/// the expected value in T and its poison at every index. A case takes a window of the pool
/// starting anywhere (wrapping around), so every case sees different values while the references
/// are computed once: the per-element host work that dominates these tests stays small.
template <class T>
class value_pool {
 public:
  value_pool(std::size_t size, std::uint64_t seed) : size_(size) {
    std::mt19937_64 rng(seed);
    a_ = random_values<T>(size, rng);
    b_ = random_values<T>(size, rng);
    d_a_.allocate(size * sizeof(T));
    d_b_.allocate(size * sizeof(T));
    upload(d_a_.get<T>(), a_);
    upload(d_b_.get<T>(), b_);
  }
  std::size_t size() const { return size_; }
  const std::vector<T>& a() const { return a_; }
  const std::vector<T>& b() const { return b_; }
  const T* device_a() const { return d_a_.get<T>(); }
  const T* device_b() const { return d_b_.get<T>(); }

  struct op_data {
    std::vector<double> reference, slack;
    std::vector<T> expected, poison;
    device_memory d_poison;
  };
  /// The op's references, computed on first use.
  op_data& data(op_id op) {
    op_data& d = ops_[static_cast<int>(op)];
    if (d.expected.empty() && size_ != 0) {
      d.reference.resize(size_);
      d.expected.resize(size_);
      d.poison.resize(size_);
      if (op == op_id::selu_grad) d.slack.resize(size_);
      for (std::size_t j = 0; j < size_; ++j) {
        const double x = to_double(a_[j]), dy = to_double(b_[j]);
        d.reference[j] = op_reference<T>(op, x, dy);
        d.expected[j] = round_to<T>(d.reference[j]);
        d.poison[j] = poison_for(d.expected[j]);
        if (!d.slack.empty()) d.slack[j] = op_slack<T>(op, dy);
      }
      d.d_poison.allocate(size_ * sizeof(T));
      upload(d.d_poison.template get<T>(), d.poison);
    }
    return d;
  }
  /// `actual` is right for pool index j under op.
  bool check(op_id op, std::size_t j, T actual) {
    const op_data& d = data(op);
    if (bits_of(actual) == bits_of(d.expected[j])) return true;  // the common case, fast
    return matches_strictly(actual, d.reference[j], op_max_ulp<T>(op), d.slack.empty() ? 0.0 : d.slack[j]);
  }

 private:
  std::size_t size_;
  std::vector<T> a_, b_;
  device_memory d_a_, d_b_;
  op_data ops_[static_cast<int>(op_id::count)];
};

/// Copies pool[start, start + n) (wrapping) to dst with device-to-device copies on stream 0.
template <class T>
void copy_window(T* dst, const T* pool, std::size_t pool_size, std::size_t start, std::size_t n) {
  std::size_t done = 0, at = start % pool_size;
  while (done < n) {
    const std::size_t len = std::min(n - done, pool_size - at);
    CUACT_CUDA_REQUIRE(cudaMemcpyAsync(dst + done, pool + at, len * sizeof(T), cudaMemcpyDeviceToDevice, 0));
    done += len;
    at = 0;
  }
}

/// The window's host bytes equal the pool's (an input the kernel must not have changed).
template <class T>
bool window_unchanged(const T* host, const std::vector<T>& pool, std::size_t start, std::size_t n) {
  std::size_t done = 0, at = start % pool.size();
  while (done < n) {
    const std::size_t len = std::min(n - done, pool.size() - at);
    if (std::memcmp(host + done, pool.data() + at, len * sizeof(T)) != 0) return false;
    done += len;
    at = 0;
  }
  return true;
}

// ---- elementwise cases -----------------------------------------------------------------------

/// Launch settings of a case, for the fuzz: the public entry or a direct elementwise_kernel launch
/// with its own grid; the stream is an index into the caller's streams (0: the legacy default).
struct launch_setup {
  bool direct = false;
  unsigned grid = 0, block = 0;
  int stream = 0;
};

/// One elementwise case: op over n elements of pool window [start, start + n), input k at element
/// offset offset[k] from a 256-byte boundary, the output at offset[2], or in place over input
/// `in_place` (-1: out of place). width 0 is cuact::auto_width.
struct ew_case {
  op_id op = op_id::relu;
  int width = 0;
  std::size_t n = 0, start = 0;
  std::size_t offset[3] = {0, 0, 0};
  int in_place = -1;
  launch_setup launch;
  // set by the harness
  std::size_t slot[3] = {0, 0, 0};
  cudaError_t status = cudaSuccess;
};

/// What a test ran and how much of it failed.
struct tally {
  std::size_t cases = 0, elements = 0, failed_cases = 0, bad_elements = 0;
};

/// Runs a batch: lays out the slots, fills inputs from the pool and outputs with poison, calls
/// launch(c, in0, in1, out) -> cudaError_t for every case, then checks each case: the call's
/// status, guards, inputs unchanged, and every output element against the reference.
template <class T, class Launch>
void run_ew_batch(value_pool<T>& pool, guarded_arena& arena, std::vector<ew_case>& cases, Launch&& launch,
                  tally& total) {
  if (cases.empty()) return;
  arena.clear();
  for (ew_case& c : cases) {
    const int inputs = op_inputs(c.op);
    for (int k = 0; k < inputs; ++k) c.slot[k] = arena.add(c.n * sizeof(T), c.offset[k] * sizeof(T));
    c.slot[2] = c.in_place >= 0 ? c.slot[c.in_place] : arena.add(c.n * sizeof(T), c.offset[2] * sizeof(T));
    pool.data(c.op);  // references and poison before the launch
  }
  arena.prepare();
  for (ew_case& c : cases) {
    const T* sources[2] = {pool.device_a(), pool.device_b()};
    for (int k = 0; k < op_inputs(c.op); ++k) {
      copy_window(arena.device<T>(c.slot[k]), sources[k], pool.size(), c.start, c.n);
    }
    if (c.in_place < 0) {
      copy_window(arena.device<T>(c.slot[2]), pool.data(c.op).d_poison.template get<T>(), pool.size(),
                  c.start, c.n);
    }
  }
  // Cases may run on non-blocking streams, which do not wait for the copies on stream 0.
  CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
  for (ew_case& c : cases) {
    const T* in0 = arena.device<T>(c.slot[0]);
    const T* in1 = op_inputs(c.op) > 1 ? arena.device<T>(c.slot[1]) : nullptr;
    c.status = launch(c, in0, in1, arena.device<T>(c.slot[2]));  // cudaError_t
  }
  CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
  CUACT_CUDA_REQUIRE(cudaGetLastError());
  arena.download();

  for (const ew_case& c : cases) {
    ++total.cases;
    total.elements += c.n;
    std::string problems;
    if (c.status != cudaSuccess)
      problems += std::string("call returned ") + cudaGetErrorName(c.status) + "; ";
    const int inputs = op_inputs(c.op);
    for (int k = 0; k < inputs; ++k) {
      if (!arena.guards_intact(c.slot[k]))
        problems += "write outside [0, n) around input " + std::to_string(k) + "; ";
      if (k != c.in_place &&
          !window_unchanged(arena.host<T>(c.slot[k]), k == 0 ? pool.a() : pool.b(), c.start, c.n)) {
        problems += "input " + std::to_string(k) + " modified; ";
      }
    }
    if (c.in_place < 0 && !arena.guards_intact(c.slot[2]))
      problems += "write outside [0, n) around the output; ";
    const T* out = arena.host<T>(c.slot[2]);
    const auto& data = pool.data(c.op);
    const int max_ulp = op_max_ulp<T>(c.op);
    std::size_t bad = 0;
    for (std::size_t i = 0, j = c.start % pool.size(); i < c.n; ++i, j = j + 1 == pool.size() ? 0 : j + 1) {
      if (bits_of(out[i]) == bits_of(data.expected[j]) ||
          matches_strictly(out[i], data.reference[j], max_ulp, data.slack.empty() ? 0.0 : data.slack[j])) {
        continue;
      }
      if (bad++ < 4) {
        problems += "element " + std::to_string(i) + ": a=" + describe(pool.a()[j]) +
                    (inputs > 1 ? " b=" + describe(pool.b()[j]) : std::string()) + " got " +
                    describe(out[i]) + " expected " + describe(data.expected[j]) + "; ";
      }
    }
    if (bad != 0) problems += std::to_string(bad) + " of " + std::to_string(c.n) + " elements wrong";
    total.bad_elements += bad;
    if (!problems.empty()) {
      ++total.failed_cases;
      const std::string type = type_name<T>(), op = op_name(c.op),
                        launch_path = c.launch.direct ? "direct kernel" : "public entry";
      const std::size_t n = c.n, start = c.start, in0_offset = c.offset[0], in1_offset = c.offset[1],
                        out_offset = c.offset[2];
      const int width = c.width, in_place = c.in_place, stream = c.launch.stream;
      const unsigned grid = c.launch.grid, block = c.launch.block;
      CAPTURE(type, op, width, n, start, in0_offset, in1_offset, out_offset, in_place, launch_path, grid,
              block, stream);
      FAIL_CHECK(problems);
    }
  }
  cases.clear();
}

/// Collects cases and runs them in batches of bounded arena size; call flush() after the last add.
template <class T, class Launch>
class ew_batcher {
 public:
  ew_batcher(value_pool<T>& pool, guarded_arena& arena, Launch launch, tally& total,
             std::size_t max_bytes = std::size_t(192) << 20, std::size_t max_cases = 1024)
      : pool_(pool),
        arena_(arena),
        launch_(std::move(launch)),
        total_(total),
        max_bytes_(max_bytes),
        max_cases_(max_cases) {}
  void add(const ew_case& c) {
    const std::size_t bytes = (c.in_place >= 0 ? 2 : 3) * (c.n * sizeof(T) + 1024);
    if (!cases_.empty() && (bytes_ + bytes > max_bytes_ || cases_.size() >= max_cases_)) flush();
    cases_.push_back(c);
    bytes_ += bytes;
  }
  void flush() {
    if (cases_.empty()) return;
    run_ew_batch(pool_, arena_, cases_, launch_, total_);
    bytes_ = 0;
  }

 private:
  value_pool<T>& pool_;
  guarded_arena& arena_;
  Launch launch_;
  tally& total_;
  std::size_t max_bytes_, max_cases_, bytes_ = 0;
  std::vector<ew_case> cases_;
};
template <class T, class Launch>
ew_batcher<T, Launch> make_batcher(value_pool<T>& pool, guarded_arena& arena, Launch launch, tally& total) {
  return ew_batcher<T, Launch>(pool, arena, std::move(launch), total);
}

/// The element offsets (0..15) of the pointers of the matrix tests, for a given n: every offset
/// with all pointers equal (vector path with a head), in place, and with different offsets (the
/// scalar path); for the two large sizes a few representative ones.
struct offset_combo {
  std::size_t offset[3];
  int in_place;
};
inline std::vector<offset_combo> offset_combos(int inputs, std::size_t n, bool quick) {
  std::vector<offset_combo> combos;
  const auto same = [&](std::size_t k) { combos.push_back({{k, k, k}, -1}); };
  // in place over the last input (forward: in; backward: dy), the other input at `other`
  const auto in_place = [&](std::size_t k, std::size_t other) {
    combos.push_back({{inputs == 2 ? other : k, k, k}, inputs - 1});
  };
  const auto different = [&](std::size_t k) {
    const std::size_t d = (k + 1 + k % 7) % 16;  // != k
    if (inputs == 1) {
      combos.push_back({{k, 0, d}, -1});
    } else {
      switch (k % 4) {
        case 0:
          combos.push_back({{k, k, d}, -1});
          break;
        case 1:
          combos.push_back({{k, d, k}, -1});
          break;
        case 2:
          combos.push_back({{d, k, k}, -1});
          break;
        default:
          combos.push_back({{d, k, k}, 1});
          break;  // in place, x misaligned against dy
      }
    }
  };
  if (quick) {
    same(0);
    same(3);
    in_place(1, 1);
    different(0);
    different(3);
    return combos;
  }
  if (n <= 4099) {
    for (std::size_t k = 0; k < 16; ++k) {
      same(k);
      in_place(k, k);
      different(k);
    }
  } else if (n <= 65537) {
    same(0);
    same(1);
    same(7);
    in_place(0, 0);
    in_place(3, 3);
    different(0);
    different(5);
    different(2);
  } else {
    same(0);
    in_place(1, 1);
    different(3);
    different(2);
  }
  return combos;
}

/// n in {0, 1, 2, V-1, V, V+1, 31, 32, 33, 1000, 4099, 65537, 2^20 + 3} for vector width V.
inline std::vector<std::size_t> matrix_sizes(int vec, bool quick) {
  const std::size_t v = static_cast<std::size_t>(vec);
  std::vector<std::size_t> sizes =
      quick ? std::vector<std::size_t>{0, 1, v + 1, 33, 4099}
            : std::vector<std::size_t>{
                  0, 1, 2, v - 1, v, v + 1, 31, 32, 33, 1000, 4099, 65537, (std::size_t(1) << 20) + 3};
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

/// Pool size for the matrix tests: room for the largest window.
inline std::size_t matrix_pool_size(bool quick) {
  return quick ? std::size_t(1) << 14 : std::size_t(1) << 21;
}

/// Runs the offset x n matrix for one op through launch(c, in0, in1, out).
template <class T, class Launch>
void run_matrix(value_pool<T>& pool, guarded_arena& arena, op_id op, int width, int vec, Launch launch,
                std::mt19937_64& rng, tally& total) {
  const bool quick = quick_mode();
  auto batcher = make_batcher(pool, arena, std::move(launch), total);
  for (std::size_t n : matrix_sizes(vec, quick)) {
    for (const offset_combo& combo : offset_combos(op_inputs(op), n, quick)) {
      ew_case c;
      c.op = op;
      c.width = width;
      c.n = n;
      c.start = std::uniform_int_distribution<std::size_t>(0, pool.size() - std::min(n, pool.size()))(rng);
      std::copy(combo.offset, combo.offset + 3, c.offset);
      c.in_place = combo.in_place;
      batcher.add(c);
    }
  }
  batcher.flush();
}

/// Calls f(std::integral_constant<int, W>) for each W in {1, 2, 4, 8, auto_width} that fits 16
/// bytes of T.
template <class T, class F>
void for_each_width(F&& f) {
  f(std::integral_constant<int, 1>{});
  f(std::integral_constant<int, 2>{});
  if constexpr (sizeof(T) * 4 <= 16) f(std::integral_constant<int, 4>{});
  if constexpr (sizeof(T) * 8 <= 16) f(std::integral_constant<int, 8>{});
  f(std::integral_constant<int, cuact::auto_width>{});
}
template <class T>
constexpr int resolved_width(int width) {
  return width == cuact::auto_width ? static_cast<int>(16 / sizeof(T)) : width;
}

// ---- ReLU mask round trip --------------------------------------------------------------------

/// relu_forward_mask(x -> out, mask), relu_backward_mask(mask, dy -> dx), and backward(relu, x2,
/// dy2 -> dx2) on copies of the same data; out, mask, dx and dx2 are checked exactly and dx must
/// equal dx2 bit for bit (NaN payloads aside).
struct mask_case {
  int width = 0;
  std::size_t n = 0, start = 0;
  std::size_t x_offset = 0, out_offset = 0, dy_offset = 0, dx_offset = 0, mask_word_offset = 0;
  bool forward_in_place = false, backward_in_place = false;
  launch_setup launch;
  enum { x, out, mask, dy, dx, x2, dy2, dx2, slot_count };
  std::size_t slot[slot_count] = {};
  cudaError_t status = cudaSuccess;
};

template <class T>
std::string describe_mask_case(const mask_case& c) {
  char buffer[320];
  std::snprintf(
      buffer, sizeof buffer,
      "%s mask round trip width=%d n=%zu offsets(x,out,dy,dx)=(%zu,%zu,%zu,%zu) mask_word_offset=%zu "
      "forward_in_place=%d backward_in_place=%d direct=%d grid=%u block=%u stream=%d",
      type_name<T>().c_str(), c.width, c.n, c.x_offset, c.out_offset, c.dy_offset, c.dx_offset,
      c.mask_word_offset, c.forward_in_place, c.backward_in_place, c.launch.direct ? 1 : 0, c.launch.grid,
      c.launch.block, c.launch.stream);
  return buffer;
}

/// launch(c, x, out, mask, dy, dx, x2, dy2, dx2) -> cudaError_t runs the three calls.
template <class T, class Launch>
void run_mask_batch(value_pool<T>& pool, guarded_arena& arena, std::vector<mask_case>& cases, Launch&& launch,
                    tally& total) {
  if (cases.empty()) return;
  arena.clear();
  pool.data(op_id::relu);
  pool.data(op_id::relu_grad);
  for (mask_case& c : cases) {
    const std::size_t bytes = c.n * sizeof(T);
    c.slot[mask_case::x] = arena.add(bytes, c.x_offset * sizeof(T));
    c.slot[mask_case::out] =
        c.forward_in_place ? c.slot[mask_case::x] : arena.add(bytes, c.out_offset * sizeof(T));
    c.slot[mask_case::mask] = arena.add(cuact::relu_mask_words(c.n) * 4, c.mask_word_offset * 4);
    c.slot[mask_case::dy] = arena.add(bytes, c.dy_offset * sizeof(T));
    c.slot[mask_case::dx] =
        c.backward_in_place ? c.slot[mask_case::dy] : arena.add(bytes, c.dx_offset * sizeof(T));
    c.slot[mask_case::x2] = arena.add(bytes, c.x_offset * sizeof(T));
    c.slot[mask_case::dy2] = arena.add(bytes, c.dy_offset * sizeof(T));
    c.slot[mask_case::dx2] = arena.add(bytes, c.dx_offset * sizeof(T));
  }
  arena.prepare();  // the mask words start as the sentinel: an unwritten word shows
  for (mask_case& c : cases) {
    const std::size_t P = pool.size();
    copy_window(arena.device<T>(c.slot[mask_case::x]), pool.device_a(), P, c.start, c.n);
    copy_window(arena.device<T>(c.slot[mask_case::x2]), pool.device_a(), P, c.start, c.n);
    copy_window(arena.device<T>(c.slot[mask_case::dy]), pool.device_b(), P, c.start, c.n);
    copy_window(arena.device<T>(c.slot[mask_case::dy2]), pool.device_b(), P, c.start, c.n);
    if (!c.forward_in_place) {
      copy_window(arena.device<T>(c.slot[mask_case::out]), pool.data(op_id::relu).d_poison.template get<T>(),
                  P, c.start, c.n);
    }
    const T* grad_poison = pool.data(op_id::relu_grad).d_poison.template get<T>();
    if (!c.backward_in_place)
      copy_window(arena.device<T>(c.slot[mask_case::dx]), grad_poison, P, c.start, c.n);
    copy_window(arena.device<T>(c.slot[mask_case::dx2]), grad_poison, P, c.start, c.n);
  }
  CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
  for (mask_case& c : cases) {
    c.status =
        launch(c, arena.device<T>(c.slot[mask_case::x]), arena.device<T>(c.slot[mask_case::out]),
               arena.device<std::uint32_t>(c.slot[mask_case::mask]), arena.device<T>(c.slot[mask_case::dy]),
               arena.device<T>(c.slot[mask_case::dx]), arena.device<T>(c.slot[mask_case::x2]),
               arena.device<T>(c.slot[mask_case::dy2]), arena.device<T>(c.slot[mask_case::dx2]));
  }
  CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
  CUACT_CUDA_REQUIRE(cudaGetLastError());
  arena.download();

  for (const mask_case& c : cases) {
    ++total.cases;
    total.elements += c.n;
    std::string problems;
    if (c.status != cudaSuccess)
      problems += std::string("call returned ") + cudaGetErrorName(c.status) + "; ";
    for (std::size_t s = 0; s < mask_case::slot_count; ++s) {
      if (!arena.guards_intact(c.slot[s]))
        problems += "write outside the array of slot " + std::to_string(s) + "; ";
    }
    if (!c.forward_in_place &&
        !window_unchanged(arena.host<T>(c.slot[mask_case::x]), pool.a(), c.start, c.n)) {
      problems += "x modified; ";
    }
    if (!c.backward_in_place &&
        !window_unchanged(arena.host<T>(c.slot[mask_case::dy]), pool.b(), c.start, c.n)) {
      problems += "dy modified; ";
    }
    if (!window_unchanged(arena.host<T>(c.slot[mask_case::x2]), pool.a(), c.start, c.n) ||
        !window_unchanged(arena.host<T>(c.slot[mask_case::dy2]), pool.b(), c.start, c.n)) {
      problems += "x2 or dy2 modified; ";
    }
    const T* out = arena.host<T>(c.slot[mask_case::out]);
    const T* dx = arena.host<T>(c.slot[mask_case::dx]);
    const T* dx2 = arena.host<T>(c.slot[mask_case::dx2]);
    const std::uint32_t* mask = arena.host<std::uint32_t>(c.slot[mask_case::mask]);
    std::size_t bad = 0;
    const auto note = [&](const std::string& what) {
      if (bad++ < 4) problems += what + "; ";
    };
    for (std::size_t w = 0; w < cuact::relu_mask_words(c.n); ++w) {
      std::uint32_t expected = 0;
      for (std::size_t b = 0; b < 32 && w * 32 + b < c.n; ++b) {
        const std::size_t j = (c.start + w * 32 + b) % pool.size();
        if (to_double(pool.a()[j]) > 0) expected |= std::uint32_t(1) << b;
      }
      if (mask[w] != expected) {
        char buffer[96];
        std::snprintf(buffer, sizeof buffer, "mask word %zu is 0x%08x, expected 0x%08x", w, mask[w],
                      expected);
        note(buffer);
      }
    }
    for (std::size_t i = 0, j = c.start % pool.size(); i < c.n; ++i, j = j + 1 == pool.size() ? 0 : j + 1) {
      const bool out_ok = pool.check(op_id::relu, j, out[i]);
      const bool dx_ok = pool.check(op_id::relu_grad, j, dx[i]);
      const bool dx2_ok = pool.check(op_id::relu_grad, j, dx2[i]);
      // bit for bit, except that two NaNs may differ in payload (the compiler may fold the
      // 16-bit -> float -> 16-bit round trip of dy in one kernel and not the other)
      const bool same = bits_of(dx[i]) == bits_of(dx2[i]) || (is_nan(dx[i]) && is_nan(dx2[i]));
      if (out_ok && dx_ok && dx2_ok && same) continue;
      note("element " + std::to_string(i) + " (x=" + describe(pool.a()[j]) + " dy=" + describe(pool.b()[j]) +
           "): out " + describe(out[i]) + (out_ok ? "" : " WRONG") + ", mask backward dx " + describe(dx[i]) +
           (dx_ok ? "" : " WRONG") + ", backward(relu) dx " + describe(dx2[i]) + (dx2_ok ? "" : " WRONG") +
           (same ? "" : ", the two dx differ in bits"));
    }
    if (bad != 0) problems += std::to_string(bad) + " mismatches";
    total.bad_elements += bad;
    if (!problems.empty()) {
      ++total.failed_cases;
      const std::string what = describe_mask_case<T>(c);
      CAPTURE(what);
      FAIL_CHECK(problems);
    }
  }
  cases.clear();
}

// ---- the matrix tests (one dtype per translation unit) ------------------------------------------

inline void print_tally(const char* what, const tally& t) {
  std::printf("%s: %zu cases, %zu elements, %zu failed cases, %zu bad elements\n", what, t.cases, t.elements,
              t.failed_cases, t.bad_elements);
}

template <class T, int W>
void run_forward_width(value_pool<T>& pool, guarded_arena& arena, std::mt19937_64& rng, tally& total) {
  const auto entry = [](auto act) {
    return [act](const ew_case& c, const T* in, const T*, T* out) {
      return c.in_place >= 0 ? cuact::forward<W>(act, out, c.n) : cuact::forward<W>(act, in, out, c.n);
    };
  };
  const int vec = resolved_width<T>(W);
  run_matrix<T>(pool, arena, op_id::relu, W, vec, entry(cuact::relu{}), rng, total);
  run_matrix<T>(pool, arena, op_id::selu, W, vec, entry(cuact::selu{}), rng, total);
  run_matrix<T>(pool, arena, op_id::leaky, W, vec, entry(leaky_relu{}), rng, total);
}

/// cuact::forward for relu, selu and a user-defined leaky relu, every width, out of place and in
/// place (the in-place overload), over offsets x n.
template <class T>
void run_forward_matrix(std::uint64_t seed) {
  value_pool<T> pool(matrix_pool_size(quick_mode()), seed);
  guarded_arena arena;
  std::mt19937_64 rng(seed ^ 0x5EED);
  tally total;
  for_each_width<T>(
      [&](auto width) { run_forward_width<T, decltype(width)::value>(pool, arena, rng, total); });
  print_tally(("forward " + type_name<T>()).c_str(), total);
  CHECK(total.failed_cases == 0);
  CHECK(total.cases > 0);
}

template <class T, int W>
void run_backward_width(value_pool<T>& pool, guarded_arena& arena, std::mt19937_64& rng, tally& total) {
  const auto from_input = [](auto act) {
    return [act](const ew_case& c, const T* x, const T* dy, T* dx) {
      return cuact::backward<W>(act, x, dy, dx, c.n);
    };
  };
  const auto from_output = [](auto act) {
    return [act](const ew_case& c, const T* y, const T* dy, T* dx) {
      return cuact::backward_from_output<W>(act, y, dy, dx, c.n);
    };
  };
  const int vec = resolved_width<T>(W);
  run_matrix<T>(pool, arena, op_id::relu_grad, W, vec, from_input(cuact::relu{}), rng, total);
  run_matrix<T>(pool, arena, op_id::selu_grad, W, vec, from_input(cuact::selu{}), rng, total);
  run_matrix<T>(pool, arena, op_id::relu_grad_out, W, vec, from_output(cuact::relu{}), rng, total);
  run_matrix<T>(pool, arena, op_id::selu_grad_out, W, vec, from_output(cuact::selu{}), rng, total);
}

/// cuact::backward and cuact::backward_from_output for relu and selu, every width, dx == dy in
/// place and out of place, over offsets x n.
template <class T>
void run_backward_matrix(std::uint64_t seed) {
  value_pool<T> pool(matrix_pool_size(quick_mode()), seed);
  guarded_arena arena;
  std::mt19937_64 rng(seed ^ 0xBAC);
  tally total;
  for_each_width<T>(
      [&](auto width) { run_backward_width<T, decltype(width)::value>(pool, arena, rng, total); });
  print_tally(("backward " + type_name<T>()).c_str(), total);
  CHECK(total.failed_cases == 0);
  CHECK(total.cases > 0);
}

/// backward(selu) with dy = 1 against central differences of the float64 selu,
/// (selu(x + h) - selu(x - h)) / 2h with h = 1e-6, where selu is smooth: 1e-3 < |x|, x >= -10
/// (below, the difference quotient's own rounding error, ~eps * 1.76 / h = 4e-10, is no longer
/// small against selu'(x) = 1.76 e^x). Tolerance: relative 1e-4, or 2^-m for 16-bit types (the
/// result is rounded to m fraction bits), plus one denormal of T (half: selu'(-10) is a denormal).
template <class T>
void run_finite_difference_check(std::uint64_t seed) {
  const std::size_t n = quick_mode() ? 2048 : std::size_t(1) << 16;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> negative(-10.0, -1e-3), positive(1e-3, 64.0), unit(0.0, 1.0);
  std::vector<T> x(n), dy(n, round_to<T>(1.0));
  for (auto& v : x) {
    do {
      v = round_to<T>(unit(rng) < 0.6 ? negative(rng) : positive(rng));
    } while (std::fabs(to_double(v)) <= 1e-3 || to_double(v) < -10.0);
  }
  device_memory d_x(n * sizeof(T)), d_dy(n * sizeof(T)), d_dx(n * sizeof(T));
  upload(d_x.get<T>(), x);
  upload(d_dy.get<T>(), dy);
  const double rel = std::max(1e-4, std::ldexp(1.0, -mantissa_bits<T>()));
  const double denormal = std::ldexp(1.0, 2 - (1 << (exponent_bits<T>() - 1)) - mantissa_bits<T>());
  for (int scalar = 0; scalar < 2; ++scalar) {
    CUACT_CUDA_REQUIRE(cudaMemset(d_dx.get(), 0xFF, n * sizeof(T)));
    const cudaError_t status =
        scalar ? cuact::backward<1>(cuact::selu{}, d_x.get<T>(), d_dy.get<T>(), d_dx.get<T>(), n)
               : cuact::backward(cuact::selu{}, d_x.get<T>(), d_dy.get<T>(), d_dx.get<T>(), n);
    REQUIRE(status == cudaSuccess);
    std::vector<T> dx(n);
    CUACT_CUDA_REQUIRE(cudaMemcpy(dx.data(), d_dx.get(), n * sizeof(T), cudaMemcpyDeviceToHost));
    std::size_t bad = 0;
    std::string first;
    for (std::size_t i = 0; i < n; ++i) {
      const double xd = to_double(x[i]), h = 1e-6;
      const double fd = (selu_ref(xd + h) - selu_ref(xd - h)) / (2 * h);
      const double got = to_double(dx[i]);
      if (!(std::fabs(got - fd) <= rel * std::fabs(fd) + denormal)) {
        if (bad++ == 0)
          first = "x=" + describe(x[i]) + " dx=" + describe(dx[i]) + " fd=" + std::to_string(fd);
      }
    }
    const std::string type = type_name<T>();
    CAPTURE(type, scalar, n, rel, first);
    CHECK(bad == 0);
  }
}

/// backward_from_output(selu, y = forward(selu, x), dy) against backward(selu, x, dy) on the same
/// data. They differ by what y's rounding loses: forward is within selu_max_ulp<T> of the rounded
/// selu(x), so |y - selu(x)| <= (max_ulp + 1/2) ulp(y) and the derivative y + scale * alpha is off
/// by as much in absolute terms. Accepted: within 2 * max_ulp + 1 ulp of each other, or
/// |dx_out - dx_in| <= |dy| * ((max_ulp + 1) ulp_T(y) + 4 denorm_min(C)) + 2 underflow_slack(dy)
/// (the second term: the from-input derivative underflows, see op_max_ulp). With dy = +-inf and a
/// derivative below that bound, the product inf * (tiny or 0) is indeterminate and anything goes.
template <class T>
void run_from_output_consistency(std::uint64_t seed) {
  using C = cuact::detail::compute_t<T>;
  const std::size_t n = quick_mode() ? 4096 : std::size_t(1) << 20;
  std::mt19937_64 rng(seed);
  const std::vector<T> x = random_values<T>(n, rng), dy = random_values<T>(n, rng);
  device_memory d_x(n * sizeof(T)), d_y(n * sizeof(T)), d_dy(n * sizeof(T)), d_in(n * sizeof(T)),
      d_out(n * sizeof(T));
  upload(d_x.get<T>(), x);
  upload(d_dy.get<T>(), dy);
  REQUIRE(cuact::forward(cuact::selu{}, d_x.get<T>(), d_y.get<T>(), n) == cudaSuccess);
  REQUIRE(cuact::backward(cuact::selu{}, d_x.get<T>(), d_dy.get<T>(), d_in.get<T>(), n) == cudaSuccess);
  REQUIRE(cuact::backward_from_output(cuact::selu{}, d_y.get<T>(), d_dy.get<T>(), d_out.get<T>(), n) ==
          cudaSuccess);
  std::vector<T> y(n), dx_in(n), dx_out(n);
  CUACT_CUDA_REQUIRE(cudaMemcpy(y.data(), d_y.get(), n * sizeof(T), cudaMemcpyDeviceToHost));
  CUACT_CUDA_REQUIRE(cudaMemcpy(dx_in.data(), d_in.get(), n * sizeof(T), cudaMemcpyDeviceToHost));
  CUACT_CUDA_REQUIRE(cudaMemcpy(dx_out.data(), d_out.get(), n * sizeof(T), cudaMemcpyDeviceToHost));
  const int max_ulp = selu_max_ulp<T>();
  const double tiny = 4 * static_cast<double>(std::numeric_limits<C>::denorm_min());
  std::size_t bad = 0;
  std::string first;
  for (std::size_t i = 0; i < n; ++i) {
    const T a = dx_out[i], b = dx_in[i];
    if (bits_of(a) == bits_of(b)) continue;
    const double xd = to_double(x[i]), dyd = to_double(dy[i]);
    const double derivative =
        xd <= 0 ? static_cast<double>(precise::scale_alpha() * std::exp(static_cast<long double>(xd)))
                : static_cast<double>(precise::scale);
    const double bound = (max_ulp + 1) * ulp_of(y[i]) + tiny;
    bool ok;
    if (std::isinf(dyd) && derivative <= bound) {
      ok = true;
    } else if (is_nan(a) || is_nan(b)) {
      ok = is_nan(a) && is_nan(b);
    } else {
      ok = ulp_distance(a, b) <= 2 * max_ulp + 1 ||
           (std::isfinite(dyd) &&
            std::fabs(to_double(a) - to_double(b)) <= std::fabs(dyd) * bound + 2 * underflow_slack<C>(dyd));
    }
    if (!ok && bad++ == 0) {
      first = "x=" + describe(x[i]) + " y=" + describe(y[i]) + " dy=" + describe(dy[i]) + " from output " +
              describe(a) + " from input " + describe(b);
    }
  }
  const std::string type = type_name<T>();
  CAPTURE(type, n, first);
  CHECK(bad == 0);
}

template <class T, int W>
void run_mask_width(value_pool<T>& pool, guarded_arena& arena, std::mt19937_64& rng, tally& total) {
  const bool quick = quick_mode();
  const std::vector<std::size_t> sizes =
      quick ? std::vector<std::size_t>{1, 33, 1000}
            : std::vector<std::size_t>{0, 1, 31, 32, 33, 63, 64, 65, 1000, 4099};
  const auto launch = [](const mask_case& c, const T* x, T* out, std::uint32_t* mask, const T* dy, T* dx,
                         const T* x2, const T* dy2, T* dx2) {
    if (const cudaError_t s = cuact::relu_forward_mask(x, out, mask, c.n); s != cudaSuccess) return s;
    if (const cudaError_t s = cuact::relu_backward_mask<W>(mask, dy, dx, c.n); s != cudaSuccess) return s;
    return cuact::backward<W>(cuact::relu{}, x2, dy2, dx2, c.n);
  };
  std::vector<mask_case> batch;
  const auto start = [&](std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, pool.size() - n)(rng);
  };
  for (std::size_t n : sizes) {
    for (std::size_t k = 0; k < 16; k += quick ? 7 : 1) {
      const std::size_t other = (k + 1 + k % 7) % 16;
      mask_case c;
      c.width = W;
      c.n = n;
      c.mask_word_offset = k % 4;
      c.x_offset = k;
      // out of place, out co-aligned with x (the forward vectorizes when k * sizeof(T) % 16 == 0)
      c.start = start(n);
      c.out_offset = k;
      c.dy_offset = k;
      c.dx_offset = other;
      batch.push_back(c);
      // both in place
      c.start = start(n);
      c.forward_in_place = c.backward_in_place = true;
      c.out_offset = c.dx_offset = k;
      c.dy_offset = other;
      batch.push_back(c);
      // out misaligned against x, dx co-aligned with dy
      c.start = start(n);
      c.forward_in_place = c.backward_in_place = false;
      c.out_offset = other;
      c.dy_offset = c.dx_offset = k;
      batch.push_back(c);
    }
    if (batch.size() >= 256) run_mask_batch(pool, arena, batch, launch, total);
  }
  run_mask_batch(pool, arena, batch, launch, total);
}

/// relu_forward_mask + relu_backward_mask<W> against backward<W>(relu), every width, n straddling
/// mask-word edges, misaligned and in-place arrays, misaligned mask words.
template <class T>
void run_mask_matrix(std::uint64_t seed) {
  value_pool<T> pool(std::size_t(1) << 14, seed);
  guarded_arena arena;
  std::mt19937_64 rng(seed ^ 0x3A5C);
  tally total;
  for_each_width<T>([&](auto width) { run_mask_width<T, decltype(width)::value>(pool, arena, rng, total); });
  print_tally(("relu mask round trip " + type_name<T>()).c_str(), total);
  CHECK(total.failed_cases == 0);
  CHECK(total.cases > 0);
}

}  // namespace cuact_test
