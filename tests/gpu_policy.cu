// cuact::scoped_policy on the device: forward, backward and the bias forward under forced policies
// (block sizes, vectors per thread, passes, a residency cap, bulk tiles, a grid smaller than the
// work) give the very bits of select_policy's launch, for relu, silu and gelu in fp32 and bf16 at
// sizes straddling vector and tile edges, inputs with negatives, NaN, +-inf, +-0 and denormals,
// outputs poisoned first. Elementwise results do not depend on the grid; a forced policy that
// changed them would be a bug of the override. Then a counting selector forced on each path the
// override reaches (elementwise, rows: the packed gate and the bias walk, the ReLU mask's forward
// and backward, the bias backward's column sums, the fused quantize): the path must ask it, and
// its results match float64 host references. Last, small grids launched to overlap the previous
// kernel: a chain of dependent calls, eagerly and in a graph, sees every write before it.
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

namespace {
/// x + 1 after `spins` dependent steps whose result adds +0: a kernel slow enough (tens of
/// microseconds) that a next kernel reading its output before it ends would read stale data.
struct slow_add_one {
  static constexpr cuact::cost cost = cuact::cost::heavy;
  int spins;
  template <class C>
  __host__ __device__ C operator()(C x) const {
    C acc = C(0);
    for (int i = 0; i < spins; ++i) acc = acc * C(0.5) + C(1e-30);
    return (x + C(1)) + C(0) * acc;  // acc is finite: + (+0)
  }
};
struct add_one {
  static constexpr cuact::cost cost = cuact::cost::light;
  template <class C>
  __host__ __device__ C operator()(C x) const {
    return x + C(1);
  }
};
}  // namespace

// Small grids launch as programmatic dependent launches on sm_90 (docs/tuning.md): each must still
// see every write of the kernel before it. A chain of calls, each reading what the previous one
// wrote (out of place between two arrays, and in place), alternating a slow kernel and a fast one,
// eagerly and replayed from a CUDA graph, at sizes below and above the overlapped grid (whatever
// the device's wave), with misaligned arrays. The reference repeats the same float additions on the
// host, so it is exact; inputs have negatives, NaN, +-inf, +-0 and denormals. The functors sit in
// an unnamed namespace, as users often write them: the -Werror build checks that cuact's kernels
// compile for them without a warning.
TEST_CASE("overlapped launch: a chain of dependent calls sees every previous write",
          "[gpu][policy]") {
  constexpr int rounds = 24;  // a slow and a fast call each
  for (const std::size_t n :
       {std::size_t(1000), std::size_t(4099), std::size_t(65536), std::size_t(1) << 22}) {
    for (const std::size_t offset : {std::size_t(0), std::size_t(1)}) {
      for (const bool graph : {false, true}) {
        for (const bool in_place : {false, true}) {
          CAPTURE(n, offset, graph, in_place);
          const std::vector<float> host = inputs<float>(n);
          device_memory a((n + offset) * sizeof(float)), b((n + offset) * sizeof(float));
          float* const pa = a.get<float>() + offset;
          float* const pb = b.get<float>() + offset;
          CUACT_CUDA_REQUIRE(
              cudaMemcpy(pa, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
          CUACT_CUDA_REQUIRE(cudaMemset(pb, 0xA5, n * sizeof(float)));  // poison
          cudaStream_t stream = nullptr;
          CUACT_CUDA_REQUIRE(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
          const slow_add_one slow{n <= 65536 ? 4000 : 40};
          const auto chain = [&] {
            for (int r = 0; r < rounds; ++r) {
              if (in_place) {
                CUACT_CUDA_REQUIRE(cuact::forward(slow, pa, pa, n, stream));
                CUACT_CUDA_REQUIRE(cuact::forward(add_one{}, pa, pa, n, stream));
              } else {
                CUACT_CUDA_REQUIRE(cuact::forward(slow, pa, pb, n, stream));
                CUACT_CUDA_REQUIRE(cuact::forward(add_one{}, pb, pa, n, stream));
              }
            }
          };
          if (graph) {
            cudaGraph_t g = nullptr;
            cudaGraphExec_t exec = nullptr;
            CUACT_CUDA_REQUIRE(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
            chain();
            CUACT_CUDA_REQUIRE(cudaStreamEndCapture(stream, &g));
            CUACT_CUDA_REQUIRE(cudaGraphInstantiate(&exec, g, 0));
            CUACT_CUDA_REQUIRE(cudaGraphLaunch(exec, stream));
            CUACT_CUDA_REQUIRE(cudaStreamSynchronize(stream));
            CUACT_CUDA_REQUIRE(cudaGraphExecDestroy(exec));
            CUACT_CUDA_REQUIRE(cudaGraphDestroy(g));
          } else {
            chain();
            CUACT_CUDA_REQUIRE(cudaStreamSynchronize(stream));
          }
          CUACT_CUDA_REQUIRE(cudaStreamDestroy(stream));
          const std::vector<float> got = [&] {
            std::vector<float> out(n);
            CUACT_CUDA_REQUIRE(
                cudaMemcpy(out.data(), pa, n * sizeof(float), cudaMemcpyDeviceToHost));
            return out;
          }();
          std::size_t wrong = 0, first_wrong = n;
          for (std::size_t i = 0; i < n; ++i) {
            volatile float want = host[i];  // volatile: one float addition at a time, as the GPU
            for (int step = 0; step < 2 * rounds; ++step) want = want + 1.0f;
            const float w = want;
            const bool same = std::isnan(w) ? std::isnan(got[i]) : got[i] == w;
            if (!same && wrong++ == 0) first_wrong = i;
          }
          INFO("first wrong element " << first_wrong);
          CHECK(wrong == 0);
        }
      }
    }
  }
}
