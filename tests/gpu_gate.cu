// Gates on the GPU (include/cuact/fused.cuh: gate_forward, gate_backward and their packed forms):
// gpt-oss's clamped SwiGLU against the float64 reference (gate_reference.hpp) over hashed inputs
// with every class of value and edge values at +-limit, every dtype, sizes straddling the vector
// width, misaligned base pointers, out of place into poisoned outputs with guard elements that
// must stay untouched, and in place (out over a; da over a and db over b; dab over ab); a user's
// gate with partial derivatives only; and the errors (cudaError_t with last_error_detail's text).
// Exits 77 without a GPU (gpu_main.cu).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <cuact/cuact.cuh>

#include "catch.hpp"
#include "fused_reference.hpp"
#include "gate_reference.hpp"
#include "support.hpp"

using namespace cuact_test;

namespace {

#define CUDA_REQUIRE(call) REQUIRE((call) == cudaSuccess)

constexpr std::size_t guard = 64;  ///< poisoned elements after each array

/// n elements of T (and `guard` more) in device memory, `offset` elements past a 256-byte
/// boundary, every byte poisoned to 0xA5 first.
template <class T>
class device_array {
 public:
  explicit device_array(std::size_t n, std::size_t offset = 0) : n_(n) {
    REQUIRE(cudaMalloc(&base_, (n + guard + offset) * sizeof(T) + 256) == cudaSuccess);
    REQUIRE(cudaMemset(base_, 0xA5, (n + guard + offset) * sizeof(T) + 256) == cudaSuccess);
    data_ = reinterpret_cast<T*>(static_cast<char*>(base_) + offset * sizeof(T));
  }
  device_array(const std::vector<T>& host, std::size_t offset) : device_array(host.size(), offset) {
    REQUIRE(cudaMemcpy(data_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice) ==
            cudaSuccess);
  }
  ~device_array() { cudaFree(base_); }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  T* get() const { return data_; }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    REQUIRE(cudaMemcpy(host.data(), data_, n_ * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
    return host;
  }
  /// Whether the guard elements after the array still hold the poison.
  bool guard_intact() const {
    std::vector<unsigned char> bytes(guard * sizeof(T));
    REQUIRE(cudaMemcpy(bytes.data(), data_ + n_, bytes.size(), cudaMemcpyDeviceToHost) ==
            cudaSuccess);
    for (unsigned char c : bytes) {
      if (c != 0xA5) return false;
    }
    return true;
  }

 private:
  std::size_t n_;
  void* base_ = nullptr;
  T* data_ = nullptr;
};

/// Whether two host arrays hold the same bytes (NaN payloads included).
template <class T>
bool same_bytes(const std::vector<T>& x, const std::vector<T>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0;
}

/// Hashed values with the clamp's edge values spread through them.
template <class T>
std::vector<T> gate_inputs(std::uint64_t seed, std::size_t n, double limit) {
  std::vector<T> v = hashed<T>(seed, n);
  const double edges[] = {limit,
                          -limit,
                          limit + ulp_of<T>(limit),
                          -limit - ulp_of<T>(limit),
                          limit - ulp_of<T>(limit),
                          -1.0,
                          0.0,
                          -0.0,
                          std::numeric_limits<double>::infinity(),
                          -std::numeric_limits<double>::infinity(),
                          std::numeric_limits<double>::quiet_NaN(),
                          ulp_of<T>(0.0)};
  for (std::size_t i = 0; i < n; i += 7) v[i] = round_to<T>(edges[(i / 7 + seed) % 12]);
  return v;
}

/// Counts the elements off the reference, reporting the first few.
struct tally_off {
  std::size_t count = 0;
  template <class T>
  void check(const cuact::clamped_swiglu& g, const char* what, std::size_t i, T a, T b, T dy, T out,
             T da, T db) {
    const std::string off = clamped_off<T>(g, a, b, dy, out, da, db);
    if (off.empty() || ++count > 6) return;
    FAIL_CHECK(what << off << " at " << i << ": a=" << describe(a) << " b=" << describe(b)
                    << " dy=" << describe(dy) << " got out " << describe(out) << " da "
                    << describe(da) << " db " << describe(db));
  }
};

}  // namespace

// A named namespace: a gate defined in an anonymous one and launched as a kernel template
// argument conflicts with the kernels' hidden visibility (nvcc #1407-D).
namespace gpu_gate_test {

/// A gate with partial derivatives only: a * b + a.
struct product_plus {
  template <class C>
  CUACT_HOST_DEVICE C operator()(C a, C b) const {
    return a * b + a;
  }
  template <class C>
  CUACT_HOST_DEVICE C partial_a(C, C b) const {
    return b + C(1);
  }
  template <class C>
  CUACT_HOST_DEVICE C partial_b(C a, C) const {
    return a;
  }
};

}  // namespace gpu_gate_test

using gpu_gate_test::product_plus;

TEMPLATE_TEST_CASE("gpu gate: clamped SwiGLU, separate, in place and packed", "[gpu][gate]",
                   CUACT_TEST_DTYPES) {
  using T = TestType;
  const cuact::clamped_swiglu gate{1.702, 7.0};
  const std::size_t sizes[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 255, 257, 4097, 100003};
  for (const std::size_t n : sizes) {
    for (const std::size_t offset : {std::size_t(0), std::size_t(1), std::size_t(3)}) {
      CAPTURE(type_name<T>(), n, offset);
      tally_off bad;
      const auto a = gate_inputs<T>(1 + offset, n, gate.limit),
                 b = gate_inputs<T>(2 + n % 5, n, gate.limit), dy = hashed<T>(3, n);
      // out of place into poisoned arrays
      device_array<T> da_(a, offset), db_(b, offset), ddy(dy, offset), dout(n, offset),
          dda(n, offset), ddb(n, offset);
      CUDA_REQUIRE(cuact::gate_forward(gate, da_.get(), db_.get(), dout.get(), n));
      CUDA_REQUIRE(
          cuact::gate_backward(gate, da_.get(), db_.get(), ddy.get(), dda.get(), ddb.get(), n));
      CHECK(dout.guard_intact());
      CHECK(dda.guard_intact());
      CHECK(ddb.guard_intact());
      const auto out = dout.download(), ga = dda.download(), gb = ddb.download();
      for (std::size_t i = 0; i < n; ++i) {
        bad.check(gate, "separate", i, a[i], b[i], dy[i], out[i], ga[i], gb[i]);
      }
      // in place: the forward over a, then the backward with da over a and db over b
      device_array<T> ia(a, offset), ib(b, offset), iout(a, offset);
      CUDA_REQUIRE(cuact::gate_forward(gate, iout.get(), ib.get(), iout.get(), n));
      CUDA_REQUIRE(
          cuact::gate_backward(gate, ia.get(), ib.get(), ddy.get(), ia.get(), ib.get(), n));
      CHECK(same_bytes(iout.download(), out));
      CHECK(same_bytes(ia.download(), ga));
      CHECK(same_bytes(ib.download(), gb));
      CHECK(bad.count == 0);
    }
  }
}

TEMPLATE_TEST_CASE("gpu gate: packed clamped SwiGLU, both halves, backward in place", "[gpu][gate]",
                   float, __nv_bfloat16, __half, double) {
  using T = TestType;
  const cuact::clamped_swiglu gate{1.5, 3.0};
  struct shape {
    std::size_t rows, cols, offset;
  };
  const shape shapes[] = {{1, 1, 0},  {1, 1, 1}, {3, 5, 0},    {3, 5, 1},     {7, 64, 0},
                          {7, 64, 3}, {2, 8, 1}, {1000, 1, 0}, {33, 1000, 0}, {129, 257, 5}};
  for (const shape s : shapes) {
    for (const cuact::gate_half half : {cuact::gate_half::first, cuact::gate_half::second}) {
      const std::size_t rows = s.rows, cols = s.cols, n = rows * cols;
      CAPTURE(type_name<T>(), rows, cols, s.offset, half == cuact::gate_half::first);
      tally_off bad;
      const auto ab = gate_inputs<T>(5 + cols, 2 * n, gate.limit);
      const auto dy = hashed<T>(6 + rows, n);
      const std::size_t a_at = half == cuact::gate_half::first ? 0 : cols, b_at = cols - a_at;
      device_array<T> dab(ab, s.offset), ddy(dy, s.offset + 1), dout(n, s.offset),
          dgrad(2 * n, s.offset);
      CUDA_REQUIRE(cuact::gate_forward_packed(gate, dab.get(), dout.get(), rows, cols, half));
      CUDA_REQUIRE(
          cuact::gate_backward_packed(gate, dab.get(), ddy.get(), dgrad.get(), rows, cols, half));
      CHECK(dout.guard_intact());
      CHECK(dgrad.guard_intact());
      const auto out = dout.download(), g = dgrad.download();
      for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t c = 0; c < cols; ++c) {
          const std::size_t i = r * cols + c, ia = r * 2 * cols + a_at + c,
                            ib = r * 2 * cols + b_at + c;
          bad.check(gate, "packed", i, ab[ia], ab[ib], dy[i], out[i], g[ia], g[ib]);
        }
      }
      CUDA_REQUIRE(
          cuact::gate_backward_packed(gate, dab.get(), ddy.get(), dab.get(), rows, cols, half));
      CHECK(same_bytes(dab.download(), g));  // in place: the same bytes
      CHECK(bad.count == 0);
    }
  }
}

TEST_CASE("gpu gate: a user's gate with partial derivatives only", "[gpu][gate]") {
  constexpr std::size_t n = 4099;
  const auto a = hashed<float>(8, n), b = hashed<float>(9, n), dy = hashed<float>(10, n);
  device_array<float> da_(a, 1), db_(b, 1), ddy(dy, 1), dout(n, 1), dda(n, 1), ddb(n, 1);
  CUDA_REQUIRE(cuact::gate_forward(product_plus{}, da_.get(), db_.get(), dout.get(), n));
  CUDA_REQUIRE(cuact::gate_backward(product_plus{}, da_.get(), db_.get(), ddy.get(), dda.get(),
                                    ddb.get(), n));
  const auto out = dout.download(), ga = dda.download(), gb = ddb.download();
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double ad = a[i], bd = b[i], dyd = dy[i];
    // one rounding per operation: a * b + a (or its fma) within 2 float ulps of the product's
    bad += !close_to(out[i], ad * bd + ad, 2, 2 * ulp_of<float>(std::fabs(ad * bd)));
    bad += !close_to(ga[i], dyd * in_compute<float>(bd + 1), 1);
    bad += !close_to(gb[i], dyd * ad, 0.5);
  }
  CHECK(bad == 0);
}

TEST_CASE("gpu gate: errors with cudaError_t and a detail, nothing written", "[gpu][gate]") {
  std::vector<float> pageable(64);
  device_array<float> d(64);
  const cuact::clamped_swiglu gate{};
  const auto rejected = [](cudaError_t status, const char* what) {
    INFO(what);
    CHECK(status == cudaErrorInvalidValue);
    CHECK(!std::string(cuact::last_error_detail()).empty());  // the reason, not printed
  };
  rejected(cuact::gate_forward(gate, pageable.data(), d.get(), d.get() + 32, 16), "pageable a");
  rejected(cuact::gate_forward(gate, static_cast<const float*>(nullptr), d.get(), d.get() + 32, 16),
           "null a");
  // misaligned to the element type: a float pointer one byte off
  const float* odd = reinterpret_cast<const float*>(reinterpret_cast<const char*>(d.get()) + 1);
  rejected(cuact::gate_forward(gate, odd, d.get() + 16, d.get() + 32, 8), "misaligned a");
  rejected(cuact::gate_forward(gate, d.get(), d.get() + 16, d.get() + 1, 8), "out overlaps a");
  rejected(
      cuact::gate_backward(gate, d.get(), d.get() + 8, d.get() + 16, d.get() + 32, d.get() + 33, 8),
      "da overlaps db");
  rejected(cuact::gate_forward_packed(gate, pageable.data(), d.get(), 2, 4), "pageable ab");
  rejected(cuact::gate_backward_packed(gate, d.get(), d.get() + 16, d.get() + 1, 2, 4),
           "dab overlaps ab");
  CHECK(cuact::gate_forward(gate, d.get(), d.get(), d.get(), 0) == cudaSuccess);  // n == 0
  CHECK(cudaGetLastError() == cudaSuccess);  // nothing left behind
  CHECK(d.guard_intact());
}
