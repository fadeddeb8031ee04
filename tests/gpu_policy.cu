// cuact::scoped_policy on the device: forward, backward and the bias forward under forced policies
// (block sizes, vectors per thread, passes, a residency cap, bulk tiles, a grid smaller than the
// work) give the very bits of select_policy's launch, for relu, silu and gelu in fp32 and bf16 at
// sizes straddling vector and tile edges, inputs with negatives, NaN, +-inf, +-0 and denormals,
// outputs poisoned first. Elementwise results do not depend on the grid; a forced policy that
// changed them would be a bug of the override. Then a counting selector forced on each path the
// override reaches (elementwise, rows: the packed gate and the bias walk, the ReLU mask's forward
// and backward, the bias backward's column sums, the fused quantize): the path must ask it, and
// its results match float64 host references.
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <cuact/cuact.cuh>

#include "catch.hpp"
#include "device.hpp"

namespace {
using namespace cuact_test;

template <class T>
std::vector<T> inputs(std::size_t n) {
  std::vector<T> host(n);
  const float special[] = {0.0f,
                           -0.0f,
                           std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN(),
                           1e-40f,
                           -1e-40f};
  std::uint32_t state = 12345;
  for (std::size_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    const float x = i % 17 == 0 ? special[(i / 17) % 7]
                                : (static_cast<float>(state >> 8) / 16777216.0f - 0.5f) * 16.0f;
    host[i] = static_cast<T>(x);
  }
  return host;
}

template <class T>
std::vector<unsigned char> bytes_of(const T* data, std::size_t n) {
  std::vector<unsigned char> host(n * sizeof(T));
  CUACT_CUDA_REQUIRE(cudaMemcpy(host.data(), data, host.size(), cudaMemcpyDeviceToHost));
  return host;
}

/// The forced policies: {blocks, threads, vectors per thread, passes, heavy, cap, algorithm}.
const cuact::policy forced_policies[] = {
    {0, 128, 1, 1, true},
    {0, 256, 2, 1, true},
    {0, 1024, 1, 4, true},
    {0, 64, 4, 2, true},
    {0, 128, 1, 1, false, 16 * 1024},
    {7, 128, 2, 1, true},  // fewer blocks than the work: the loop grid-strides
    {0, 256, 1, 1, false, 0, cuact::algorithm::bulk_tiles},
};

template <class T, class A>
void check_forced_policies(A act, std::size_t n) {
  CAPTURE(n, sizeof(T));
  const std::vector<T> host_x = inputs<T>(n);
  device_memory x(n * sizeof(T) + 16), dy(n * sizeof(T) + 16), want(n * sizeof(T) + 16),
      got(n * sizeof(T) + 16), bias(64 * sizeof(T));
  CUACT_CUDA_REQUIRE(cudaMemcpy(x.get(), host_x.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  CUACT_CUDA_REQUIRE(cudaMemcpy(dy.get(), host_x.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  CUACT_CUDA_REQUIRE(cudaMemcpy(bias.get(), host_x.data(), std::min<std::size_t>(n, 64) * sizeof(T),
                                cudaMemcpyHostToDevice));
  const std::size_t cols = n % 64 == 0 ? 64 : 1;
  auto run = [&](int entry, T* out) {
    CUACT_CUDA_REQUIRE(cudaMemset(out, 0xA5, n * sizeof(T)));  // poison
    cudaError_t status = cudaSuccess;
    if (entry == 0) status = cuact::forward(act, x.get<const T>(), out, n);
    if (entry == 1) status = cuact::backward(act, x.get<const T>(), dy.get<const T>(), out, n);
    if (entry == 2) {
      status = cuact::bias_forward(act, x.get<const T>(), bias.get<const T>(), out, n / cols, cols);
    }
    CUACT_CUDA_REQUIRE(status);
    CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
  };
  for (int entry = 0; entry < 3; ++entry) {
    CAPTURE(entry);
    run(entry, want.get<T>());
    const auto expected = bytes_of(want.get<const T>(), n);
    for (const cuact::policy& forced : forced_policies) {
      CAPTURE(forced.blocks, forced.threads_per_block, forced.vectors_per_thread, forced.passes,
              forced.dynamic_shared_bytes, int(forced.algorithm));
      {
        cuact::scoped_policy guard{forced};
        run(entry, got.get<T>());
      }
      CHECK(bytes_of(got.get<const T>(), n) == expected);
    }
  }
}
}  // namespace

TEST_CASE("scoped_policy: forced policies give select_policy's results", "[gpu][policy]") {
  for (const std::size_t n :
       {std::size_t(1), std::size_t(1027), std::size_t(64 * 4099), (std::size_t(1) << 20) + 5}) {
    check_forced_policies<float>(cuact::relu{}, n);
    check_forced_policies<float>(cuact::silu{}, n);
    check_forced_policies<float>(cuact::gelu{}, n);
    check_forced_policies<__nv_bfloat16>(cuact::silu{}, n);
    check_forced_policies<__nv_bfloat16>(cuact::gelu{}, n);
  }
}

namespace {
/// A selector that forces `forced` and counts the launches it shaped: a path it never reaches
/// leaves the count where it was.
struct counting_policy {
  cuact::policy forced;
  mutable int calls = 0;
};
cuact::policy count_and_force(const cuact::policy_request&, const cuact::policy&,
                              const void* context) {
  const auto* counter = static_cast<const counting_policy*>(context);
  ++counter->calls;
  return counter->forced;
}

/// Within `relative` of the float64 reference (NaN for NaN, an infinity exactly).
bool close(double got, double want, double relative) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= relative * std::fabs(want) + 1e-37;
}

double silu_reference(double x) { return x / (1.0 + std::exp(-x)); }

template <class T>
std::vector<T> copy_back(const device_memory& d, std::size_t n) {
  std::vector<T> host(n);
  CUACT_CUDA_REQUIRE(cudaMemcpy(host.data(), d.get(), n * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}
}  // namespace

TEST_CASE("scoped_policy: a forced policy reaches every modelled path (float64 references)",
          "[gpu][policy]") {
  const cuact::policy policies[] = {{0, 256, 2, 2, true}, {5, 64, 1, 3, false, 8 * 1024}};
  for (const cuact::policy& p : policies) {
    CAPTURE(p.blocks, p.threads_per_block, p.vectors_per_thread, p.passes);
    const counting_policy counter{p};
    const cuact::scoped_policy guard{cuact::policy_selector{count_and_force, &counter}};
    const std::size_t rows = 37, cols = 1027, n = rows * cols;  // odd cols: the row walk
    const std::vector<float> hx = inputs<float>(n + 1), hb = inputs<float>(2 * cols + 1);
    device_memory x((n + 1) * sizeof(float)), ab(2 * n * sizeof(float)), bias(cols * sizeof(float)),
        out(n * sizeof(float)), dx(n * sizeof(float)), dbias(cols * sizeof(float)),
        mask(cuact::relu_mask_words(n) * 4), q(n), amax(sizeof(float));
    // x + 1 float: misaligned for the vectors, as a user's slice may be
    const float* x1 = x.get<const float>() + 1;
    CUACT_CUDA_REQUIRE(
        cudaMemcpy(x.get(), hx.data(), (n + 1) * sizeof(float), cudaMemcpyHostToDevice));
    CUACT_CUDA_REQUIRE(
        cudaMemcpy(bias.get(), hb.data(), cols * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> hab(2 * n);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t c = 0; c < 2 * cols; ++c) hab[r * 2 * cols + c] = hx[(r * 2 * cols + c) % n];
    }
    CUACT_CUDA_REQUIRE(
        cudaMemcpy(ab.get(), hab.data(), 2 * n * sizeof(float), cudaMemcpyHostToDevice));
    const auto poison = [&](device_memory& d, std::size_t bytes) {
      CUACT_CUDA_REQUIRE(cudaMemset(d.get(), 0xA5, bytes));
    };
    int before = counter.calls;
    const auto launched = [&](const char* path) {
      CAPTURE(path);
      CUACT_CUDA_REQUIRE(cudaDeviceSynchronize());
      CHECK(counter.calls > before);
      before = counter.calls;
    };

    // elementwise: forward, misaligned input
    poison(out, n * sizeof(float));
    CUACT_CUDA_REQUIRE(cuact::forward(cuact::silu{}, x1, out.get<float>(), n));
    launched("elementwise");
    std::vector<float> got = copy_back<float>(out, n);
    for (std::size_t i = 0; i < n; ++i) {
      if (!close(got[i], silu_reference(hx[i + 1]), 1e-6)) FAIL_CHECK("silu at " << i);
    }
    // rows: the packed gated forward (each row along its halves) and the bias forward's walk
    poison(out, n * sizeof(float));
    CUACT_CUDA_REQUIRE(cuact::gated_forward_packed(cuact::silu{}, ab.get<const float>(),
                                                   out.get<float>(), rows, cols));
    launched("rows (packed gate)");
    got = copy_back<float>(out, n);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t c = 0; c < cols; ++c) {
        const double want =
            silu_reference(hab[r * 2 * cols + c]) * double(hab[r * 2 * cols + cols + c]);
        if (!close(got[r * cols + c], want, 2e-6)) FAIL_CHECK("gated at " << r << ", " << c);
      }
    }
    poison(out, n * sizeof(float));
    CUACT_CUDA_REQUIRE(cuact::bias_forward(cuact::silu{}, x1, bias.get<const float>(),
                                           out.get<float>(), rows, cols));
    launched("rows (bias walk)");
    got = copy_back<float>(out, n);
    for (std::size_t i = 0; i < n; ++i) {
      const float sum = hx[i + 1] + hb[i % cols];  // the kernel's float sum
      if (!close(got[i], silu_reference(sum), 1e-6)) FAIL_CHECK("bias silu at " << i);
    }
    // the ReLU mask: its forward (sign-mask kernel) and its backward (elementwise)
    poison(out, n * sizeof(float));
    CUACT_CUDA_REQUIRE(cuact::relu_forward_mask(x.get<const float>(), out.get<float>(),
                                                mask.get<std::uint32_t>(), n));
    launched("relu mask forward");
    got = copy_back<float>(out, n);
    for (std::size_t i = 0; i < n; ++i) {
      const double want = std::isnan(hx[i]) ? hx[i] : hx[i] > 0 ? hx[i] : 0.0;
      if (!close(got[i], want, 0)) FAIL_CHECK("relu at " << i);
    }
    poison(dx, n * sizeof(float));
    CUACT_CUDA_REQUIRE(
        cuact::relu_backward_mask(mask.get<const std::uint32_t>(), x1, dx.get<float>(), n));
    launched("relu mask backward");
    got = copy_back<float>(dx, n);
    for (std::size_t i = 0; i < n; ++i) {
      const double want = hx[i] > 0 ? double(hx[i + 1]) : 0.0;
      if (!close(got[i], want, 0)) FAIL_CHECK("relu mask gradient at " << i);
    }
    // the bias backward's column sums (stage 1), against float64 sums of the stored dx
    poison(dx, n * sizeof(float));
    poison(dbias, cols * sizeof(float));
    CUACT_CUDA_REQUIRE(cuact::bias_backward(cuact::relu{}, x1, bias.get<const float>(), x1,
                                            dx.get<float>(), dbias.get<float>(), rows, cols));
    launched("bias backward");
    got = copy_back<float>(dx, n);
    const std::vector<float> got_dbias = copy_back<float>(dbias, cols);
    std::vector<double> sums(cols, 0.0), magnitude(cols, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      const float sum = hx[i + 1] + hb[i % cols];
      const double want = sum > 0 ? double(hx[i + 1]) : 0.0;  // relu: a selection of dy
      if (!close(got[i], want, 0)) FAIL_CHECK("bias relu gradient at " << i);
      sums[i % cols] += want;
      magnitude[i % cols] += std::fabs(want);
    }
    for (std::size_t c = 0; c < cols; ++c) {
      if (std::isnan(sums[c]) || std::isinf(sums[c])) {
        if (!(std::isnan(got_dbias[c]) || got_dbias[c] == sums[c])) FAIL_CHECK("dbias at " << c);
      } else if (std::fabs(got_dbias[c] - sums[c]) > 1e-6 * magnitude[c] + 1e-30) {
        FAIL_CHECK("dbias at " << c << ": " << got_dbias[c] << " against " << sums[c]);
      }
    }
    // the fused quantize: its amax, exact
    CUACT_CUDA_REQUIRE(cuact::forward_quantize(cuact::relu{}, x1, q.get<__nv_fp8_e4m3>(), n, 1.0f,
                                               amax.get<float>()));
    launched("quantize");
    float got_amax = 0;
    CUACT_CUDA_REQUIRE(cudaMemcpy(&got_amax, amax.get(), sizeof(float), cudaMemcpyDeviceToHost));
    double want_amax = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double y = hx[i + 1] > 0 ? double(hx[i + 1]) : 0.0;  // NaN skipped
      if (!std::isnan(double(hx[i + 1])) && y > want_amax) want_amax = y;
    }
    CHECK(double(got_amax) == want_amax);
  }
}
