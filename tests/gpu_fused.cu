// Fused operations on the GPU (include/cuact/fused.cuh): every entry against float64 references
// (fused_reference.hpp) over hashed inputs with every class of value, every dtype, shapes that
// straddle the vector width (1 row, 1 column, odd columns), misaligned base pointers, in place
// where allowed; dbias deterministic run to run and with either workspace; amax; and the errors
// that need a device (pageable memory, another device). Exits 77 without a GPU (gpu_main.cu).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <cuact/cuact.cuh>

#include "catch.hpp"
#include "fused_reference.hpp"
#include "plain_functors.hpp"
#include "support.hpp"

using namespace cuact_test;

namespace {

#define CUDA_REQUIRE(call) REQUIRE((call) == cudaSuccess)

/// n elements of T in device memory, `offset` elements past a 256-byte boundary.
template <class T>
class device_array {
 public:
  device_array(std::size_t n, std::size_t offset = 0) : n_(n) {
    REQUIRE(cudaMalloc(&base_, (n + offset) * sizeof(T) + 256) == cudaSuccess);
    data_ = reinterpret_cast<T*>(static_cast<char*>(base_) + offset * sizeof(T));
  }
  device_array(const std::vector<T>& host, std::size_t offset) : device_array(host.size(), offset) {
    upload(host);
  }
  ~device_array() { cudaFree(base_); }
  device_array(const device_array&) = delete;
  device_array& operator=(const device_array&) = delete;
  T* get() const { return data_; }
  void upload(const std::vector<T>& host) {
    REQUIRE(cudaMemcpy(data_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice) ==
            cudaSuccess);
  }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    REQUIRE(cudaMemcpy(host.data(), data_, n_ * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
    return host;
  }

 private:
  std::size_t n_;
  void* base_ = nullptr;
  T* data_ = nullptr;
};

struct shape {
  std::size_t rows, cols, offset;
};

/// Edges, then a seeded fuzz over shapes and offsets.
std::vector<shape> shapes() {
  std::vector<shape> s{{1, 1, 0},  {1, 1, 1},     {3, 5, 0},    {3, 5, 1}, {7, 64, 0},
                       {7, 64, 3}, {33, 1000, 0}, {1, 4099, 2}, {2, 8, 1}, {1000, 1, 0},
                       {5, 24, 0}, {4, 4096, 0},  {129, 257, 5}};
  std::mt19937_64 rng(Catch::getSeed() + 13);
  const int fuzz = quick_mode() ? 4 : 24;
  for (int k = 0; k < fuzz; ++k) {
    s.push_back({1 + rng() % 70, 1 + rng() % 600, rng() % 9});
  }
  return s;
}

/// Counts mismatches, reporting the first few.
struct mismatches {
  std::size_t count = 0;
  std::string context;  ///< the inputs of the element being checked
  template <class T>
  void check(bool ok, const char* what, std::size_t i, T got, double want) {
    if (ok || ++count > 6) return;
    FAIL_CHECK(what << " at " << i << ": got " << describe(got) << ", want " << want << " "
                    << context);
  }
};

}  // namespace

TEMPLATE_TEST_CASE("gpu fused: gated activations, separate and packed", "[gpu][fused]",
                   CUACT_TEST_DTYPES) {
  using T = TestType;
  const double ulps = float_ulps<T>();
  for (const shape s : shapes()) {
    const std::size_t rows = s.rows, cols = s.cols, n = rows * cols;
    CAPTURE(type_name<T>(), rows, cols, s.offset);
    mismatches bad;
    // ---- separate arrays: out = silu(a) * b; da, db; db in place over b ----
    const auto a = hashed<T>(1 + s.offset, n), b = hashed<T>(2 + rows, n),
               dy = hashed<T>(3 + cols, n);
    device_array<T> da_(a, s.offset), db_(b, s.offset), ddy(dy, s.offset), dout(n, s.offset),
        dda(n, s.offset);
    CUDA_REQUIRE(cuact::gated_forward(cuact::silu{}, da_.get(), db_.get(), dout.get(), n));
    CUDA_REQUIRE(cuact::gated_backward(cuact::silu{}, da_.get(), db_.get(), ddy.get(), dda.get(),
                                       db_.get(), n));
    const auto out = dout.download(), ga = dda.download(), gb = db_.download();
    for (std::size_t i = 0; i < n; ++i) {
      const double ad = to_double(a[i]), bd = to_double(b[i]), dyd = to_double(dy[i]);
      const double act = in_compute<T>(cuact::silu{}(ad));
      const double upstream = in_compute<T>(dyd * bd);
      bad.context = "a=" + describe(a[i]) + " b=" + describe(b[i]) + " dy=" + describe(dy[i]);
      // the activation is within an ulp of T (rounded_to<T>): products within that ulp times the
      // other factor
      const double dsilu = in_compute<T>(cuact::silu{}.derivative(ad));
      // bf16 (float's range, rounded_to<bf16>): a factor below bf16's smallest denormal may be
      // flushed to 0, so an infinite other factor gives NaN instead of inf
      const auto flushed = [&](double factor, double other, T got) {
        return std::is_same_v<T, __nv_bfloat16> && std::fabs(factor) < ulp_of<T>(0) &&
               std::isinf(other) && is_nan(got);
      };
      bad.check(close_to(out[i], act * bd, ulps, std::fabs(bd) * ulp_of<T>(act)) ||
                    flushed(act, bd, out[i]),
                "swiglu", i, out[i], act * bd);
      const double da_ref = upstream * dsilu;
      bad.check(close_to(ga[i], da_ref, ulps,
                         4 * epsilon<T>() * std::fabs(upstream) +
                             std::fabs(upstream) * ulp_of<T>(dsilu)) ||
                    flushed(dsilu, upstream, ga[i]),
                "swiglu da", i, ga[i], da_ref);
      bad.check(close_to(gb[i], dyd * act, ulps, std::fabs(dyd) * ulp_of<T>(act)) ||
                    flushed(act, dyd, gb[i]),
                "swiglu db (in place)", i, gb[i], dyd * act);
    }
    // ---- packed [rows, 2 cols], both conventions; backward in place over ab ----
    for (const cuact::gate_half half : {cuact::gate_half::first, cuact::gate_half::second}) {
      const auto ab = hashed<T>(5 + cols, 2 * n);
      const std::size_t a_at = half == cuact::gate_half::first ? 0 : cols, b_at = cols - a_at;
      device_array<T> dab(ab, s.offset), dy2(dy, s.offset + 1), out2(n, s.offset);
      CUDA_REQUIRE(
          cuact::gated_forward_packed(cuact::silu{}, dab.get(), out2.get(), rows, cols, half));
      CUDA_REQUIRE(cuact::gated_backward_packed(cuact::relu{}, dab.get(), dy2.get(), dab.get(),
                                                rows, cols, half));
      const auto o = out2.download(), g = dab.download();
      for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t c = 0; c < cols; ++c) {
          const std::size_t i = r * cols + c, ia = r * 2 * cols + a_at + c,
                            ib = r * 2 * cols + b_at + c;
          const double ad = to_double(ab[ia]), bd = to_double(ab[ib]), dyd = to_double(dy[i]);
          const double act = in_compute<T>(cuact::silu{}(ad));
          const double want = act * bd;
          // act(a) is within an ulp of T (rounded_to<T>), so the product within that ulp times |b|
          const bool flushed = std::is_same_v<T, __nv_bfloat16> && std::fabs(act) < ulp_of<T>(0) &&
                               std::isinf(bd) && is_nan(o[i]);  // as above
          bad.check(close_to(o[i], want, ulps, std::fabs(bd) * ulp_of<T>(act)) || flushed,
                    "swiglu packed", i, o[i], want);
          const double da_ref = ad > 0 ? in_compute<T>(dyd * bd) : 0.0;  // relu: a selection
          bad.check(close_to(g[ia], da_ref, 0.5), "reglu packed da", i, g[ia], da_ref);
          const double db_ref = dyd * cuact::relu{}(ad);
          bad.check(close_to(g[ib], db_ref, 0.5), "reglu packed db", i, g[ib], db_ref);
        }
      }
    }
    CHECK(bad.count == 0);
  }
}

TEMPLATE_TEST_CASE("gpu fused: bias + activation and a deterministic dbias", "[gpu][fused]",
                   CUACT_TEST_DTYPES) {
  using T = TestType;
  using A = cuact::detail::compute_t<T>;
  const double ulps = float_ulps<T>();
  for (const shape s : shapes()) {
    const std::size_t rows = s.rows, cols = s.cols, n = rows * cols;
    CAPTURE(type_name<T>(), rows, cols, s.offset);
    mismatches bad;
    const auto x = hashed<T>(7 + s.offset, n), bias = hashed<T>(8, cols);
    // dy finite and moderate so that dbias is a finite sum to compare
    std::vector<T> dy(n);
    for (std::size_t i = 0; i < n; ++i) {
      dy[i] = round_to<T>(std::ldexp(static_cast<double>(mix64(i + 77 * rows) % 4096) - 2048, -10));
    }
    device_array<T> dx_(x, s.offset), dbias_(bias, 0), ddy(dy, s.offset), dout(n, s.offset),
        ddx(n, s.offset);
    device_array<T> dbias1(cols), dbias2(cols), dbias3(cols);
    CUDA_REQUIRE(
        cuact::bias_forward(cuact::gelu{}, dx_.get(), dbias_.get(), dout.get(), rows, cols));
    // silu, out of place and in place: the flat pass wherever the layout allows, on every device
    // (16-bit gelu takes the walk where the budget is tight: fused_dispatch.cuh, bias_walks)
    device_array<T> dsilu(n, s.offset), dsilu_in_place(x, s.offset);
    CUDA_REQUIRE(
        cuact::bias_forward(cuact::silu{}, dx_.get(), dbias_.get(), dsilu.get(), rows, cols));
    CUDA_REQUIRE(cuact::bias_forward(cuact::silu{}, dsilu_in_place.get(), dbias_.get(),
                                     dsilu_in_place.get(), rows, cols));
    CUDA_REQUIRE(cuact::bias_backward(cuact::gelu{}, dx_.get(), dbias_.get(), ddy.get(), ddx.get(),
                                      dbias1.get(), rows, cols));
    const std::size_t bytes = cuact::bias_backward_workspace_bytes<T>(rows, cols);
    device_array<unsigned char> workspace(bytes);
    CUDA_REQUIRE(cuact::bias_backward(cuact::gelu{}, dx_.get(), dbias_.get(), ddy.get(), ddx.get(),
                                      dbias2.get(), rows, cols, workspace.get(), bytes));
    // in place: dx over dy
    CUDA_REQUIRE(cuact::bias_backward(cuact::gelu{}, dx_.get(), dbias_.get(), ddy.get(), ddy.get(),
                                      dbias3.get(), rows, cols));
    const auto out = dout.download(), dx = ddx.download(), dx3 = ddy.download();
    const auto silu_out = dsilu.download(), silu_in_place = dsilu_in_place.download();
    const auto g1 = dbias1.download(), g2 = dbias2.download(), g3 = dbias3.download();
    std::vector<double> sums(cols, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t c = i % cols;
      const double h = in_compute<T>(to_double(x[i]) + to_double(bias[c]));
      const double want = cuact::gelu{}(h);
      bad.check(close_to(out[i], want, ulps), "bias gelu", i, out[i], want);
      const double want_silu = cuact::silu{}(h);
      bad.check(close_to(silu_out[i], want_silu, ulps), "bias silu", i, silu_out[i], want_silu);
      bad.check(same_result(silu_in_place[i], silu_out[i]), "bias silu in place", i,
                silu_in_place[i], to_double(silu_out[i]));
      const double dyd = to_double(dy[i]);
      const double dx_ref = dyd * in_compute<T>(cuact::gelu{}.derivative(h));
      bad.check(close_to(dx[i], dx_ref, ulps, 4 * epsilon<T>() * std::fabs(dyd)), "bias gelu dx", i,
                dx[i], dx_ref);
      bad.check(same_result(dx3[i], dx[i]), "dx in place", i, dx3[i], to_double(dx[i]));
      sums[c] += std::isnan(to_double(dx[i])) ? 0.0 : to_double(dx[i]);
    }
    for (std::size_t c = 0; c < cols; ++c) {
      bool has_nan = false;
      for (std::size_t r = 0; r < rows; ++r)
        has_nan = has_nan || std::isnan(to_double(dx[r * cols + c]));
      const double want = has_nan ? NAN : sums[c];
      // float accumulation of rows values, each within one ulp of T: rows * eps(A) * sum|dx|
      // |dx| <= 2.3 (|dy| <= 2, |gelu'| < 1.13): each of the rows additions in A errs by at most
      // eps(A) * rows * 2.3, and the result by one ulp of T
      const double slack = 2.3 * static_cast<double>(rows) * static_cast<double>(rows) *
                           std::ldexp(1.0, -cuact_test::format_of<A>::m);
      bad.check(close_to(g1[c], want, 1, slack), "dbias", c, g1[c], want);
      bad.check(same_result(g1[c], g2[c]), "dbias with a workspace", c, g2[c], to_double(g1[c]));
      bad.check(same_result(g1[c], g3[c]), "dbias in place", c, g3[c], to_double(g1[c]));
    }
    // the same call again: bit for bit
    CUDA_REQUIRE(cuact::bias_backward(cuact::gelu{}, dx_.get(), dbias_.get(), dx_.get(), ddx.get(),
                                      dbias1.get(), rows, cols));
    CUDA_REQUIRE(cuact::bias_backward(cuact::gelu{}, dx_.get(), dbias_.get(), dx_.get(), ddx.get(),
                                      dbias2.get(), rows, cols));
    const auto r1 = dbias1.download(), r2 = dbias2.download();
    for (std::size_t c = 0; c < cols; ++c)
      bad.check(same_result(r1[c], r2[c]), "dbias rerun", c, r2[c], to_double(r1[c]));
    CHECK(bad.count == 0);
  }
  // rows == 0: dbias = 0
  device_array<T> dbias(5);
  CUDA_REQUIRE(cudaMemset(dbias.get(), 0x7f, 5 * sizeof(T)));
  CUDA_REQUIRE(cuact::bias_backward(cuact::gelu{}, static_cast<const T*>(nullptr),
                                    static_cast<const T*>(nullptr), static_cast<const T*>(nullptr),
                                    static_cast<T*>(nullptr), dbias.get(), 0, 5));
  for (const T v : dbias.download()) CHECK(to_double(v) == 0.0);
}

/// The bias backward's stage 1 run by its own kernel and by its capped one (kernels/column_sum.cuh:
/// the same body in at most 64 registers, which the library takes where bias_gradient_capped says,
/// so on some devices only): both against what bias_backward wrote, bit for bit.
template <class Activation, class T>
void check_stage1_kernels(std::size_t rows, std::size_t cols, std::size_t offset) {
  namespace cd = cuact::detail;
  using A = cd::compute_t<T>;
  constexpr int width = cd::resolve_width<cuact::auto_width, sizeof(T)>();
  CAPTURE(type_name<T>(), rows, cols, offset);
  const std::size_t n = rows * cols;
  const auto x = hashed<T>(21 + offset, n), bias = hashed<T>(22, cols), dy = hashed<T>(23, n);
  device_array<T> dx(x, offset), dbias(bias, 0), ddy(dy, offset), dgrad(n, offset), dsum(cols);
  CUDA_REQUIRE(cuact::bias_backward(Activation{}, dx.get(), dbias.get(), ddy.get(), dgrad.get(),
                                    dsum.get(), rows, cols));
  const auto want_dx = dgrad.download(), want_sum = dsum.download();
  const auto chunks = cd::bias_gradient_chunks(rows, cols, width);
  device_array<A> partial(chunks.chunks * cols);
  const auto params = cd::make_bias_gradient_params<width>(
      cuact::bias_gradient_op<Activation, T>{{}, Activation{}}, dx.get(), dbias.get(), ddy.get(),
      dgrad.get(), partial.get(), rows, cols);
  const dim3 grid = cd::bias_gradient_launch_grid(params, chunks);
  for (const bool capped : {false, true}) {
    CAPTURE(capped);
    CUDA_REQUIRE(cudaMemset(dgrad.get(), 0x7f, n * sizeof(T)));
    CUDA_REQUIRE(cudaMemset(dsum.get(), 0x7f, cols * sizeof(T)));
    if (capped) {
      cd::bias_gradient_capped_kernel<<<grid, cd::bias_gradient_block_threads>>>(params);
    } else {
      cd::bias_gradient_kernel<<<grid, cd::bias_gradient_block_threads>>>(params);
    }
    cd::column_sum_kernel<<<cd::grid_blocks(cols, cd::threads_per_block), cd::threads_per_block>>>(
        static_cast<const A*>(partial.get()), chunks.chunks, cols, dsum.get());
    CUDA_REQUIRE(cudaDeviceSynchronize());
    const auto got_dx = dgrad.download(), got_sum = dsum.download();
    mismatches bad;
    for (std::size_t i = 0; i < n; ++i) {
      bad.check(same_result(got_dx[i], want_dx[i]), "dx", i, got_dx[i], to_double(want_dx[i]));
    }
    for (std::size_t c = 0; c < cols; ++c) {
      bad.check(same_result(got_sum[c], want_sum[c]), "dbias", c, got_sum[c],
                to_double(want_sum[c]));
    }
    CHECK(bad.count == 0);
  }
}

TEST_CASE("gpu fused: the bias backward's two stage 1 kernels have their own facts",
          "[gpu][fused]") {
  // One parameter type, two kernels: the facts cache (launch.cuh) keeps each kernel's, so the
  // rule (fused_dispatch.cuh: bias_gradient_capped) compares the two, on the first call and later
  namespace cd = cuact::detail;
  using params = cd::bias_gradient_params<cuact::bias_gradient_op<cuact::relu, float>, 4, float>;
  int device = 0;
  CUDA_REQUIRE(cudaGetDevice(&device));
  for (int call = 0; call < 2; ++call) {
    cd::kernel_facts own{}, capped{};
    CUDA_REQUIRE(cd::get_kernel_facts(cd::bias_gradient_kernel<params>, device, own));
    CUDA_REQUIRE(cd::get_kernel_facts(cd::bias_gradient_capped_kernel<params>, device, capped));
    CAPTURE(call, own.registers_per_thread, capped.registers_per_thread);
    CHECK(capped.registers_per_thread <= 64);
    CHECK(capped.resident_blocks_per_sm >= static_cast<int>(cd::bias_gradient_capped_blocks));
    cudaFuncAttributes attributes{};
    CUDA_REQUIRE(cudaFuncGetAttributes(&attributes, cd::bias_gradient_kernel<params>));
    CHECK(own.registers_per_thread == attributes.numRegs);
  }
}

TEST_CASE("gpu fused: the bias backward's stage 1 kernels agree", "[gpu][fused]") {
  for (const shape s : {shape{67, 1030, 0}, shape{5, 24, 1}, shape{130, 4099, 3}}) {
    check_stage1_kernels<cuact::relu, float>(s.rows, s.cols, s.offset);  // 80 registers
    check_stage1_kernels<cuact::threshold, float>(s.rows, s.cols, s.offset);
    check_stage1_kernels<cuact::relu, double>(s.rows, s.cols, s.offset);  // spills capped
    check_stage1_kernels<cuact::gelu, float>(s.rows, s.cols, s.offset);
    check_stage1_kernels<cuact::gelu, __nv_bfloat16>(s.rows, s.cols, s.offset);
    check_stage1_kernels<cuact::silu, __half>(s.rows, s.cols, s.offset);
  }
}

TEST_CASE("gpu fused: cast, fp8 quantize with amax, and compose", "[gpu][fused]") {
  for (const std::size_t n :
       {std::size_t(1), std::size_t(5), std::size_t(1000), std::size_t(1 << 20) + 3}) {
    for (const std::size_t offset : {0, 1}) {
      CAPTURE(n, offset);
      mismatches bad;
      const auto x = hashed<float>(21 + n, n);
      device_array<float> dx(x, offset);
      device_array<__nv_bfloat16> bf(n, offset);
      device_array<__nv_fp8_e4m3> e4(n, offset);
      device_array<__nv_fp8_e5m2> e5(n, offset);
      device_array<float> amax(4);
      CUDA_REQUIRE(cuact::forward_cast(cuact::silu{}, dx.get(), bf.get(), n));
      const float scale = 8.0f;
      CUDA_REQUIRE(
          cuact::forward_quantize(cuact::gelu{}, dx.get(), e4.get(), n, scale, amax.get()));
      // the scale in device memory: the same bytes and amax as the scale by value (amax[3])
      device_array<float> device_scale(std::vector<float>{scale}, 0);
      device_array<__nv_fp8_e4m3> e4_device_scale(n, offset);
      CUDA_REQUIRE(cuact::forward_quantize(cuact::gelu{}, dx.get(), e4_device_scale.get(), n,
                                           device_scale.get(), amax.get() + 3));
      // bf16 input (an MLP's activations), device scale, against fp32 input of the same values
      std::vector<__nv_bfloat16> x16(n);
      std::vector<float> x16_wide(n);
      for (std::size_t i = 0; i < n; ++i) {
        x16[i] = __float2bfloat16(x[i]);
        x16_wide[i] = __bfloat162float(x16[i]);
      }
      device_array<__nv_bfloat16> dx16(x16, offset);
      device_array<float> dx16_wide(x16_wide, 0);
      device_array<__nv_fp8_e4m3> e4_from16(n, offset), e4_from_wide(n, 0);
      CUDA_REQUIRE(cuact::forward_quantize(cuact::silu{}, dx16.get(), e4_from16.get(), n,
                                           device_scale.get(), amax.get() + 2));
      device_array<float> amax_wide(1);
      CUDA_REQUIRE(cuact::forward_quantize(cuact::silu{}, dx16_wide.get(), e4_from_wide.get(), n,
                                           scale, amax_wide.get()));
      CUDA_REQUIRE(cudaMemset(amax.get() + 1, 0, sizeof(float)));
      CUDA_REQUIRE(cuact::forward_quantize(cuact::relu{}, dx.get(), e5.get(), n, 1.0f,
                                           amax.get() + 1, cuact::amax_update::accumulate));
      // accumulate keeps the larger of the two calls
      CUDA_REQUIRE(cuact::forward_quantize(cuact::relu{}, dx.get(), e5.get(), n / 2 + 1, 0.5f,
                                           amax.get() + 1, cuact::amax_update::accumulate));
      const auto b = bf.download();
      const auto q4 = e4.download();
      const auto q5 = e5.download();
      const auto m = amax.download();
      double gelu_max = 0, relu_max = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const double xi = x[i];
        const double s = cuact::silu{}(xi);
        bad.check(close_to(b[i], s, 1.5), "silu -> bf16", i, b[i], s);
        const double g = cuact::gelu{}(xi);
        if (!std::isnan(g)) gelu_max = std::fmax(gelu_max, std::fabs(g));
        if (!std::isnan(xi)) relu_max = std::fmax(relu_max, cuact::relu{}(xi));
        const double want4 = std::isnan(g) ? NAN : std::fmax(-448.0, std::fmin(448.0, g * scale));
        const double got4 = to_double(q4[i]);
        const bool ok4 = std::isnan(want4)
                             ? is_nan(q4[i])
                             : std::fabs(got4 - want4) <= ulp_of<__nv_fp8_e4m3>(std::fabs(want4)) +
                                                              1e-3 * std::fabs(want4);
        bad.check(ok4, "gelu -> e4m3", i, q4[i], want4);
        if (i >= n / 2 + 1) {  // only the first call wrote these
          const double r = cuact::relu{}(xi);
          const double want5 = std::isnan(r) ? NAN : std::fmin(57344.0, r);
          const bool ok5 = std::isnan(want5) ? is_nan(q5[i])
                                             : std::fabs(to_double(q5[i]) - want5) <=
                                                   0.5 * ulp_of<__nv_fp8_e5m2>(want5) + 1e-12;
          bad.check(ok5, "relu -> e5m2", i, q5[i], want5);
        }
      }
      CHECK((m[0] == gelu_max ||
             std::fabs(m[0] - gelu_max) <= 1e-2 * gelu_max));  // gelu at fp8 accuracy
      CHECK(m[1] == static_cast<float>(relu_max));
      CHECK(bad.count == 0);
      const auto q4_device_scale = e4_device_scale.download();
      CHECK(std::memcmp(q4.data(), q4_device_scale.data(), n) == 0);
      CHECK(m[3] == m[0]);
      // silu at fp8 accuracy from bf16 or from the same values in fp32: one result
      const auto q16 = e4_from16.download(), q_wide = e4_from_wide.download();
      CHECK(std::memcmp(q16.data(), q_wide.data(), n) == 0);
      CHECK(m[2] == amax_wide.download()[0]);
    }
  }
  // compose: x * sigmoid(1.702 x) in one pass, forward and backward
  const std::size_t n = 4099;
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i)
    x[i] = static_cast<float>(-12.0 + 24.0 * static_cast<double>(i) / n);
  const auto quick_gelu =
      cuact::compose(cuact::linear{1 / 1.702}, cuact::affine(cuact::silu{}, 1.702));
  device_array<float> dx(x, 0), dy(std::vector<float>(n, 1.0f), 1), y(n, 0), g(n, 1);
  CUDA_REQUIRE(cuact::forward(quick_gelu, dx.get(), y.get(), n));
  CUDA_REQUIRE(cuact::backward(quick_gelu, dx.get(), dy.get(), g.get(), n));
  const auto yh = y.download(), gh = g.download();
  mismatches bad;
  for (std::size_t i = 0; i < n; ++i) {
    const double u = static_cast<double>(static_cast<float>(1.702) * x[i]);
    const double sig = 1 / (1 + std::exp(-u));
    const double want = static_cast<double>(static_cast<float>(1 / 1.702)) * u * sig;
    bad.check(close_to(yh[i], want, 8, 1e-37), "quick gelu", i, yh[i], want);
    const double dwant = sig * (1 + u * (1 - sig));
    bad.check(std::fabs(gh[i] - dwant) <= 4e-6, "quick gelu'", i, gh[i], dwant);
  }
  CHECK(bad.count == 0);
}

/// forward_quantize's direct path for bf16 input at any size (the library tabulates bf16 -> fp8 of
/// unhinted functors from tabulated_min_elements).
template <class A, class U>
cudaError_t quantize_direct(A act, const __nv_bfloat16* in, U* out, std::size_t n,
                            const float* scale, float* amax) {
  using namespace cuact::detail;
  return run_quantize<cuact::auto_width>(amax_op<A, U>{{}, act, 1.0f, nullptr}, out, n, in, amax,
                                         scale, true, nullptr, declared_cost<A>);
}

/// The tabulated quantize (kernels/table.cuh: bf16_table_quantize_op; forward_quantize's table
/// path, an unhinted functor's, where measured faster) against the direct path on the device: the
/// same bytes and amax, the scale by value and in device memory, over every bf16
/// pattern (NaN, +-inf, +-0, subnormals, the window's edges) followed by hashed values, from a
/// base one element off the vectors (a scalar head and tail).
template <class U, class A>
void check_tabulated_quantize(const char* name, A act) {
  CAPTURE(name);
  const std::size_t n = cuact::detail::tabulated_min_elements + 37;
  std::vector<__nv_bfloat16> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    __nv_bfloat16_raw raw;
    if (i < 65536) {
      raw.x = static_cast<unsigned short>(i);
    } else {  // about N(0, 2): the table's window
      std::uint64_t h = (i + 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
      h ^= h >> 31;
      const double u = (static_cast<double>(h >> 11) + 0.5) * 0x1p-53;
      const double v = static_cast<double>((h & 0x7ff) + 1) / 2049.0;
      const double z = 2 * std::sqrt(-2 * std::log(u)) * std::cos(6.283185307179586 * v);
      raw = __nv_bfloat16_raw(__float2bfloat16(static_cast<float>(z)));
    }
    x[i] = __nv_bfloat16(raw);
  }
  device_array<__nv_bfloat16> dx(x, 1);
  device_array<U> table(n, 1), table_by_value(n, 1), direct(n, 1);
  device_array<float> scale(std::vector<float>{8.0f}, 0), amax(3);
  // forward_quantize's table, for built-ins too; forward_quantize itself takes it where measured
  // faster than direct math (gpu_table_choice checks that choice), so it is called directly
  using cuact::detail::quantize_tabulated;
  CUDA_REQUIRE(quantize_tabulated<cuact::auto_width>(act, dx.get(), table.get(), n, 1.0f,
                                                     scale.get(), amax.get(), true, nullptr));
  CUDA_REQUIRE(quantize_tabulated<cuact::auto_width>(act, dx.get(), table_by_value.get(), n, 8.0f,
                                                     nullptr, amax.get() + 1, true, nullptr));
  CUDA_REQUIRE(quantize_direct(act, dx.get(), direct.get(), n, scale.get(), amax.get() + 2));
  CUDA_REQUIRE(cudaDeviceSynchronize());
  const auto q_table = table.download(), q_by_value = table_by_value.download(),
             q_direct = direct.download();
  const auto m = amax.download();
  std::size_t differ = 0, first = n;
  for (std::size_t i = 0; i < n; ++i) {
    if (q_table[i].__x != q_direct[i].__x || q_by_value[i].__x != q_direct[i].__x) {
      if (differ++ == 0) first = i;
    }
  }
  CAPTURE(first);
  if (first < n) {
    CAPTURE(describe(x[first]), describe(q_table[first]), describe(q_direct[first]));
  }
  CHECK(differ == 0);
  CHECK(m[0] == m[2]);
  CHECK(m[1] == m[2]);
  CHECK(m[2] > 0);
}

TEST_CASE("gpu fused: the tabulated bf16 -> fp8 quantize gives the direct path's bytes and amax",
          "[gpu][fused][table]") {
  if (quick_mode()) CUACT_SKIP("quick mode: the tabulated quantize needs 2^27 elements a call");
  check_tabulated_quantize<__nv_fp8_e4m3>("gelu", cuact::gelu{});
  check_tabulated_quantize<__nv_fp8_e5m2>("gelu_tanh", cuact::gelu_tanh{});
  check_tabulated_quantize<__nv_fp8_e4m3>("plain softplus", cuact_test::plain::softplus{});
}

TEST_CASE("gpu fused: errors that need a device", "[gpu][fused]") {
  std::vector<float> pageable(64);
  device_array<float> d(64);
  const float* h = pageable.data();
  CHECK(cuact::gated_forward(cuact::silu{}, h, d.get(), d.get() + 16, 16) == cudaErrorInvalidValue);
  CHECK(cuact::gated_forward_packed(cuact::silu{}, h, d.get(), 2, 4) == cudaErrorInvalidValue);
  CHECK(cuact::bias_backward(cuact::gelu{}, d.get(), h, d.get() + 8, d.get() + 16, d.get() + 32, 2,
                             4) == cudaErrorInvalidValue);
  CHECK(cuact::forward_quantize(cuact::gelu{}, d.get(),
                                reinterpret_cast<__nv_fp8_e4m3*>(d.get() + 32), 8, h,
                                d.get() + 48) == cudaErrorInvalidValue);  // a pageable scale
  CHECK(cudaGetLastError() == cudaSuccess);                               // nothing left behind
  int devices = 0;
  REQUIRE(cudaGetDeviceCount(&devices) == cudaSuccess);
  if (devices < 2) return;
  CUDA_REQUIRE(cudaSetDevice(1));
  device_array<float> other(64);
  CUDA_REQUIRE(cudaSetDevice(0));
  CHECK(cuact::bias_forward(cuact::gelu{}, d.get(), other.get(), d.get() + 16, 2, 4) ==
        cudaErrorInvalidDevice);
  CHECK(cuact::forward_quantize(cuact::gelu{}, d.get(),
                                reinterpret_cast<__nv_fp8_e4m3*>(d.get() + 32), 8, 1.0f,
                                other.get()) == cudaErrorInvalidDevice);
}
