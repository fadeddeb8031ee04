// Fused operations on the host (include/cuact/fused.cuh): the ops against float64 references over
// every class of value and every dtype; compose / affine / linear and their chain-rule
// derivatives; the row-wise body (packed GLU, bias) and the bias backward's two stages and the
// quantizing body under simulated (row or chunk, thread) decompositions with every access
// recorded; the row grid; and the entries' argument checks that need no GPU.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <cuact/cuact.cuh>

#include "access_log.hpp"
#include "catch.hpp"
#include "fused_reference.hpp"
#include "model_devices.hpp"
#include "plain_functors.hpp"
#include "support.hpp"

using namespace cuact_test;
using cuact::detail::compute_t;
using cuact::detail::from_compute;
using cuact::detail::to_compute;

namespace {

/// Host bytes starting `offset` elements past a 256-byte boundary, 256 sentinel bytes around.
template <class T>
class guarded {
 public:
  guarded(std::size_t n, std::size_t offset)
      : n_(n),
        bytes_(512 + (n + offset) * sizeof(T) + 256),
        storage_(new unsigned char[bytes_ + 256]) {
    base_ = storage_.get() + (256 - reinterpret_cast<std::uintptr_t>(storage_.get()) % 256) + 256;
    std::memset(storage_.get(), 0xA5, bytes_ + 256);
    data_ = reinterpret_cast<T*>(base_ + offset * sizeof(T));
  }
  T* get() const { return data_; }
  bool intact() const {
    const unsigned char* end = reinterpret_cast<const unsigned char*>(data_ + n_);
    for (const unsigned char* p = base_ - 256; p < reinterpret_cast<const unsigned char*>(data_);
         ++p) {
      if (*p != 0xA5) return false;
    }
    for (const unsigned char* p = end; p < end + 256; ++p) {
      if (*p != 0xA5) return false;
    }
    return true;
  }

 private:
  std::size_t n_, bytes_;
  std::unique_ptr<unsigned char[]> storage_;
  unsigned char* base_;
  T* data_;
};

}  // namespace

// ---- composition ----------------------------------------------------------------------------

TEST_CASE("fused: compose, affine and linear by the chain rule", "[cpu][fused]") {
  const auto quick_gelu =
      cuact::compose(cuact::linear{1 / 1.702}, cuact::affine(cuact::silu{}, 1.702));
  static_assert(cuact::is_heavy_v<decltype(quick_gelu)>);
  static_assert(cuact::has_derivative_v<decltype(quick_gelu)>);
  static_assert(!cuact::has_derivative_from_output_v<decltype(quick_gelu)>);
  static_assert(cuact::has_derivative_from_output_v<cuact::affine_activation<cuact::relu>>);
  static_assert(!cuact::is_heavy_v<cuact::composition<cuact::linear, cuact::relu>>);
  static_assert(cuact::detail::declared_cost<cuact::composition<cuact::linear, cuact::linear>> ==
                cuact::detail::cost_hint::light);
  for (double x = -30; x <= 30; x += 0.0625) {
    CAPTURE(x);
    const double s = 1 / (1 + std::exp(-1.702 * x));
    const double f = x * s, df = s + 1.702 * x * s * (1 - s);
    CHECK(std::fabs(quick_gelu(x) - f) <= 1e-14 * std::fabs(f) + 1e-300);
    CHECK(std::fabs(quick_gelu.derivative(x) - df) <= 1e-13 * std::fabs(df) + 1e-15);
    CHECK(std::fabs(quick_gelu.gradient(3.0, x) - 3 * df) <= 3e-13 * std::fabs(df) + 1e-15);
    const float xf = static_cast<float>(x);
    // in float: alpha * x rounded to float first (the input is then exact for silu)
    const double u = static_cast<double>(static_cast<float>(1.702) * xf);
    const double want =
        static_cast<double>(static_cast<float>(1 / 1.702)) * (u / (1 + std::exp(-u)));
    CHECK(close_to(quick_gelu(xf), want, 8, 1e-37));
  }
  // affine: alpha * act'(alpha x + beta); from the output for relu; a selection stays a selection
  const auto shifted = cuact::affine(cuact::relu{}, -2.0, 1.0);
  CHECK(shifted(1.0) == 0.0);
  CHECK(shifted(0.25) == 0.5);
  CHECK(shifted.derivative(0.25) == -2.0);
  CHECK(shifted.derivative_from_output(0.5) == -2.0);
  CHECK(shifted.gradient(std::numeric_limits<double>::infinity(), 1.0) ==
        0.0);  // relu's selection: not inf * 0
  const auto doubled_relu = cuact::compose(cuact::linear{2.0}, cuact::relu{});
  CHECK(doubled_relu.gradient(std::numeric_limits<double>::infinity(), -1.0) == 0.0);
  CHECK(doubled_relu.gradient(1.5, 1.0) == 3.0);
  // NaN through every part
  CHECK(std::isnan(quick_gelu(NAN)));
  CHECK(std::isnan(cuact::affine(cuact::gelu{}, 0.5, 1.0)(NAN)));
}

// ---- the ops against float64 ----------------------------------------------------------------

TEMPLATE_TEST_CASE("fused: gated and bias ops against float64 with special values", "[cpu][fused]",
                   CUACT_TEST_DTYPES) {
  using T = TestType;
  using C = compute_t<T>;
  constexpr std::size_t n = 1 << 15;
  const auto a = hashed<T>(1, n), b = hashed<T>(2, n), dy = hashed<T>(3, n);
  std::size_t bad = 0;
  const auto expect = [&](bool ok, const char* what, std::size_t i, T got, double want) {
    if (ok) return;
    if (++bad <= 8) {
      FAIL_CHECK(what << " at " << i << ": a=" << describe(a[i]) << " b=" << describe(b[i])
                      << " dy=" << describe(dy[i]) << " got " << describe(got) << " want " << want);
    }
  };
  const double ulps = float_ulps<T>();
  const cuact::gated_op<cuact::silu, T> swiglu{{}, {}};
  const cuact::gated_gradient_op<cuact::silu, T> swiglu_grad{{}, {}};
  const cuact::gated_gradient_op<cuact::relu, T> reglu_grad{{}, {}};
  const cuact::bias_op<cuact::gelu, T> bias_gelu{{}, {}};
  const cuact::bias_gradient_op<cuact::gelu, T> bias_gelu_grad{{}, {}};
  for (std::size_t i = 0; i < n; ++i) {
    const double ad = to_double(a[i]), bd = to_double(b[i]), dyd = to_double(dy[i]);
    const C ac = to_compute(a[i]), bc = to_compute(b[i]), dyc = to_compute(dy[i]);
    // The reference: each factor (act(a), act'(a), dy * b, x + bias) in float64 rounded to the
    // compute type, as the op forms them; so an act'(a) that underflows in float makes inf * 0 a
    // NaN in both (PyTorch's float kernels do the same).
    const double silu_a = in_compute<T>(cuact::silu{}(ad));
    const double dsilu_a = in_compute<T>(cuact::silu{}.derivative(ad));
    // SwiGLU forward: silu(a) * b
    const T out = from_compute<T>(swiglu(ac, bc));
    expect(close_to(out, silu_a * bd, ulps), "swiglu", i, out, silu_a * bd);
    // backward: da = (dy * b) * silu'(a), db = dy * silu(a)
    const auto [da, db] = swiglu_grad(ac, bc, dyc);
    const double upstream = in_compute<T>(dyd * bd);
    const double da_ref = upstream * dsilu_a;
    const T da_t = from_compute<T>(da), db_t = from_compute<T>(db);
    expect(close_to(da_t, da_ref, ulps, 4 * epsilon<T>() * std::fabs(upstream)), "swiglu da", i,
           da_t, da_ref);
    expect(close_to(db_t, dyd * silu_a, ulps), "swiglu db", i, db_t, dyd * silu_a);
    // ReGLU backward: a selection, so inf * 0 never arises where a <= 0
    const auto [rda, rdb] = reglu_grad(ac, bc, dyc);
    const T rda_t = from_compute<T>(rda), rdb_t = from_compute<T>(rdb);
    const double rda_ref = ad > 0 ? upstream : 0.0;
    expect(close_to(rda_t, rda_ref, 0.5), "reglu da", i, rda_t, rda_ref);
    expect(close_to(rdb_t, dyd * cuact::relu{}(ad), 0.5), "reglu db", i, rdb_t,
           dyd * cuact::relu{}(ad));
    // bias + gelu: gelu(x + bias), the sum rounded to C
    const double h = in_compute<T>(ad + bd);
    const T bg = from_compute<T>(bias_gelu(ac, bc));
    expect(close_to(bg, cuact::gelu{}(h), ulps), "bias gelu", i, bg, cuact::gelu{}(h));
    const T bgd = from_compute<T>(bias_gelu_grad(ac, bc, dyc));
    const double bgd_ref = dyd * in_compute<T>(cuact::gelu{}.derivative(h));
    expect(close_to(bgd, bgd_ref, ulps, 4 * epsilon<T>() * std::fabs(dyd)), "bias gelu dx", i, bgd,
           bgd_ref);
  }
  CHECK(bad == 0);
}

TEST_CASE("fused: cast and quantize ops against float64", "[cpu][fused]") {
  constexpr std::size_t n = 1 << 15;
  const auto x = hashed<float>(4, n);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double ref = cuact::silu{}(static_cast<double>(x[i]));
    const __nv_bfloat16 cast =
        from_compute<__nv_bfloat16>(cuact::forward_op<cuact::silu, __nv_bfloat16>{{}, {}}(x[i]));
    bad += !close_to(cast, ref, 1.5);
    const __half cast_half =
        from_compute<__half>(cuact::forward_op<cuact::silu, __half>{{}, {}}(x[i]));
    bad += !close_to(cast_half, ref, 1.5);
    // fp8: saturating; within one e4m3 / e5m2 ulp of the scaled reference
    float local = 0;
    const float scale = 4.0f;
    const cuact::detail::amax_op<cuact::gelu, __nv_fp8_e4m3> q{{}, {}, scale, &local};
    const __nv_fp8_e4m3 e4 = from_compute<__nv_fp8_e4m3>(q(x[i]));
    const double gref = cuact::gelu{}(static_cast<double>(x[i]));
    const double scaled = gref * scale;
    if (std::isnan(gref)) {
      bad += !is_nan(e4);
      bad += local != 0;  // NaN skipped by the amax
    } else {
      const double e4_max = 448;
      const double want = std::fabs(scaled) > e4_max ? std::copysign(e4_max, scaled) : scaled;
      const double got = to_double(e4);
      bad += std::fabs(got - want) >
             ulp_of<__nv_fp8_e4m3>(std::fmin(std::fabs(want), e4_max)) + 1e-3 * std::fabs(want);
      bad += std::isfinite(gref) &&
             std::fabs(local - std::fabs(gref)) > 1e-2 * std::fabs(gref) + 1e-30;
    }
    const cuact::detail::amax_op<cuact::relu, __nv_fp8_e5m2> q5{{}, {}, 1.0f, &local};
    const __nv_fp8_e5m2 e5 = from_compute<__nv_fp8_e5m2>(q5(x[i]));
    const double r5 = cuact::relu{}(static_cast<double>(x[i]));
    if (std::isnan(r5)) {
      bad += !is_nan(e5);
    } else {
      const double want = std::fmin(r5, 57344.0);
      bad += std::fabs(to_double(e5) - want) > 0.5 * ulp_of<__nv_fp8_e5m2>(want) + 1e-12;
    }
    // silu and sigmoid cast to fp8: within one fp8 ulp of the saturated reference, NaN for NaN
    const auto cast_within_ulp = [&](auto fp8_zero, auto act) {
      using fp8 = decltype(fp8_zero);
      const double max = std::is_same_v<fp8, __nv_fp8_e4m3> ? 448.0 : 57344.0;
      const fp8 got = from_compute<fp8>(cuact::forward_op<decltype(act), fp8>{{}, act}(x[i]));
      const double want_exact = act(static_cast<double>(x[i]));
      if (std::isnan(want_exact)) return !is_nan(got);
      const double want = std::fmax(-max, std::fmin(max, want_exact));
      return std::fabs(to_double(got) - want) > ulp_of<fp8>(want);
    };
    bad += cast_within_ulp(__nv_fp8_e4m3{}, cuact::silu{});
    bad += cast_within_ulp(__nv_fp8_e5m2{}, cuact::silu{});
    bad += cast_within_ulp(__nv_fp8_e4m3{}, cuact::sigmoid{});
    bad += cast_within_ulp(__nv_fp8_e5m2{}, cuact::sigmoid{});
  }
  CHECK(bad == 0);
}

// ---- the row-wise body under simulated grids ------------------------------------------------

namespace {

/// The rows kernel on the host: block row y of grid_y walks rows y, y + grid_y, ... with every
/// thread of the x decomposition (rows_thread(p, y, grid_y, t, threads)). One access log per
/// block row, holding the slices of its rows (`regions(log, row)` registers them and returns their
/// indices) and whatever `regions` adds once (a broadcast bias): every slice must be read (or
/// written) exactly once, and no other row touched; `check(log, indices)` runs per row.
template <class RowsParams, class Regions, class Check>
void simulate_rows(const RowsParams& p, std::size_t grid_y, std::size_t threads, Regions&& regions,
                   Check&& check) {
  for (std::size_t y = 0; y < grid_y; ++y) {
    access_log log;
    std::vector<std::vector<std::size_t>> rows_regions;
    for (std::size_t row = y; row < p.rows; row += grid_y) {
      rows_regions.push_back(regions(log, row));
    }
    for (std::size_t t = 0; t < threads; ++t) {
      log.set_thread(static_cast<std::int64_t>(t));
      cuact::detail::rows_thread(p, y, grid_y, t, threads, recording_access{&log});
    }
    for (const std::vector<std::size_t>& ids : rows_regions) check(log, ids);
  }
}

std::vector<std::size_t> thread_counts(std::size_t cols, std::size_t vec) {
  const std::size_t model = std::max<std::size_t>(1, (cols + vec - 1) / vec);
  return {1, 3, 32, model, 2 * model + 1};
}

}  // namespace

TEMPLATE_TEST_CASE("fused: packed GLU and bias rows under simulated grids", "[cpu][fused]", float,
                   __nv_bfloat16, double) {
  using T = TestType;
  using U = std::conditional_t<std::is_same_v<T, float>, __nv_bfloat16, T>;  // fp32 -> bf16 output
  constexpr int V =
      cuact::detail::resolve_width<cuact::auto_width, cuact::detail::max_size_of<T, U>()>();
  std::size_t cases = 0;
  for (std::size_t rows : {1, 2, 5}) {
    for (std::size_t cols : {1, 2, 3, 4, 7, 8, 9, 16, 33, 64}) {
      for (std::size_t offset_in : {0, 1, 3}) {
        for (std::size_t offset_out : {std::size_t(0), offset_in}) {
          for (const cuact::gate_half half : {cuact::gate_half::first, cuact::gate_half::second}) {
            CAPTURE(type_name<T>(), rows, cols, offset_in, offset_out,
                    half == cuact::gate_half::first);
            ++cases;
            // ---- packed forward: out[r, c] = silu(a) * b ----
            guarded<T> ab(rows * 2 * cols, offset_in);
            guarded<U> out(rows * cols, offset_out);
            for (std::size_t i = 0; i < rows * 2 * cols; ++i) ab.get()[i] = hash_value<T>(7, i);
            const std::size_t a_at = half == cuact::gate_half::first ? 0 : cols, b_at = cols - a_at;
            const cuact::gated_op<cuact::silu, U> op{{}, {}};
            auto p = cuact::detail::make_rows_params<V>(
                op, cuact::outputs(out.get()), {cols}, rows, cols,
                cuact::inputs<T, T>(ab.get() + a_at, ab.get() + b_at), {2 * cols, 2 * cols});
            const bool co_aligned = offset_in == offset_out && (2 * cols) % V == 0 && cols % V == 0;
            CHECK(p.row.head + p.row.vectors * V + p.row.tail == cols);
            if (!co_aligned) CHECK(p.row.vectors == 0);
            if (co_aligned && cols >= 2 * V) CHECK(p.row.vectors > 0);
            for (std::size_t threads : thread_counts(cols, V)) {
              for (std::size_t grid_y : {std::size_t(1), std::size_t(2), rows}) {
                for (unsigned k : {1u, 2u, 3u}) {  // vectors per thread along the row; 3: clamped
                  p.row.vectors_per_thread = k;
                  std::fill(out.get(), out.get() + rows * cols, from_bits<U>(0x7f));
                  simulate_rows(
                      p, grid_y, threads,
                      [&](access_log& log, std::size_t r) {
                        return std::vector<std::size_t>{
                            log.add_region(ab.get() + r * 2 * cols + a_at, cols * sizeof(T)),
                            log.add_region(ab.get() + r * 2 * cols + b_at, cols * sizeof(T)),
                            log.add_region(out.get() + r * cols, cols * sizeof(U))};
                      },
                      [&](access_log& log, const std::vector<std::size_t>& ids) {
                        INFO((log.errors().empty() ? std::string() : log.errors().front()));
                        REQUIRE(log.errors().empty());
                        REQUIRE(log.each_byte(ids[0], 1, 0));
                        REQUIRE(log.each_byte(ids[1], 1, 0));
                        REQUIRE(log.each_byte(ids[2], 0, 1));
                      });
                  REQUIRE(out.intact());
                  REQUIRE(ab.intact());
                  for (std::size_t r = 0; r < rows; ++r) {
                    for (std::size_t c = 0; c < cols; ++c) {
                      const T* row = ab.get() + r * 2 * cols;
                      const U want =
                          from_compute<U>(op(to_compute(row[a_at + c]), to_compute(row[b_at + c])));
                      REQUIRE(same_result(out.get()[r * cols + c], want));
                    }
                  }
                }
              }
            }
            // ---- packed backward in place (dab == ab) and out of place ----
            for (bool in_place : {false, true}) {
              guarded<T> x(rows * 2 * cols, offset_in), dab_storage(rows * 2 * cols, offset_out);
              guarded<T> dy(rows * cols, offset_out);
              for (std::size_t i = 0; i < rows * 2 * cols; ++i) x.get()[i] = hash_value<T>(8, i);
              for (std::size_t i = 0; i < rows * cols; ++i) dy.get()[i] = hash_value<T>(9, i);
              const std::vector<T> x0(x.get(), x.get() + rows * 2 * cols);
              T* dab = in_place ? x.get() : dab_storage.get();
              const cuact::gated_gradient_op<cuact::gelu_tanh, T> g{{}, {}};
              const std::size_t pitch = 2 * cols;
              const auto pb = cuact::detail::make_rows_params<V>(
                  g, cuact::outputs(dab + a_at, dab + b_at), {pitch, pitch}, rows, cols,
                  cuact::inputs<T, T, T>(x.get() + a_at, x.get() + b_at, dy.get()),
                  {pitch, pitch, cols});
              simulate_rows(
                  pb, 2, thread_counts(cols, V)[3],
                  [&](access_log& log, std::size_t r) {
                    const std::size_t r_a =
                        log.add_region(x.get() + r * pitch + a_at, cols * sizeof(T));
                    const std::size_t r_b =
                        log.add_region(x.get() + r * pitch + b_at, cols * sizeof(T));
                    const std::size_t r_dy = log.add_region(dy.get() + r * cols, cols * sizeof(T));
                    const std::size_t r_da =
                        in_place ? r_a : log.add_region(dab + r * pitch + a_at, cols * sizeof(T));
                    const std::size_t r_db =
                        in_place ? r_b : log.add_region(dab + r * pitch + b_at, cols * sizeof(T));
                    return std::vector<std::size_t>{r_a, r_b, r_dy, r_da, r_db};
                  },
                  [&](access_log& log, const std::vector<std::size_t>& ids) {
                    INFO((log.errors().empty() ? std::string() : log.errors().front()));
                    REQUIRE(log.errors().empty());
                    REQUIRE(log.each_byte(ids[2], 1, 0));
                    REQUIRE(log.each_byte(ids[0], 1, in_place ? 1 : 0));
                    REQUIRE(log.each_byte(ids[1], 1, in_place ? 1 : 0));
                    if (!in_place) {
                      REQUIRE(log.each_byte(ids[3], 0, 1));
                      REQUIRE(log.each_byte(ids[4], 0, 1));
                    }
                  });
              REQUIRE(x.intact());
              REQUIRE(dab_storage.intact());
              for (std::size_t r = 0; r < rows; ++r) {
                for (std::size_t c = 0; c < cols; ++c) {
                  const auto [da, db] =
                      g(to_compute(x0[r * pitch + a_at + c]), to_compute(x0[r * pitch + b_at + c]),
                        to_compute(dy.get()[r * cols + c]));
                  REQUIRE(same_result(dab[r * pitch + a_at + c], from_compute<T>(da)));
                  REQUIRE(same_result(dab[r * pitch + b_at + c], from_compute<T>(db)));
                }
              }
            }
            // ---- bias forward: bias pitch 0, in place over x when the types agree ----
            if (half == cuact::gate_half::first) {
              guarded<T> x(rows * cols, offset_in), bias(cols, offset_out);
              guarded<U> y(rows * cols, offset_out);
              for (std::size_t i = 0; i < rows * cols; ++i) x.get()[i] = hash_value<T>(10, i);
              for (std::size_t c = 0; c < cols; ++c) bias.get()[c] = hash_value<T>(11, c);
              const cuact::bias_op<cuact::gelu, U> bop{{}, {}};
              auto pf = cuact::detail::make_rows_params<V, cuact::detail::broadcast_input(1)>(
                  bop, cuact::outputs(y.get()), {cols}, rows, cols,
                  cuact::inputs<T, T>(x.get(), bias.get()), {cols, std::size_t(0)});
              if (cols % V != 0 || offset_in != offset_out) CHECK(pf.row.vectors == 0);
              // every rows-in-flight count the launch can choose, up to the walk's cap
              constexpr int max_in_flight = decltype(pf)::max_rows_in_flight;
              static_assert(max_in_flight == 4, "x loads one 16-byte vector per row");
              for (unsigned in_flight = 1; in_flight <= unsigned(max_in_flight); ++in_flight) {
                pf.rows_in_flight = in_flight;
                std::fill(y.get(), y.get() + rows * cols, from_bits<U>(0x7f));
                const std::size_t grid_y = 3;
                std::size_t r_bias = 0;
                simulate_rows(
                    pf, grid_y, thread_counts(cols, V)[4],
                    [&](access_log& log, std::size_t r) {
                      // the bias: one region per block row, read once by each column's thread
                      if (r < grid_y) r_bias = log.add_region(bias.get(), cols * sizeof(T));
                      return std::vector<std::size_t>{
                          log.add_region(x.get() + r * cols, cols * sizeof(T)),
                          log.add_region(y.get() + r * cols, cols * sizeof(U))};
                    },
                    [&](access_log& log, const std::vector<std::size_t>& ids) {
                      REQUIRE(log.errors().empty());
                      REQUIRE(log.each_byte(ids[0], 1, 0));
                      REQUIRE(log.each_byte(r_bias, 1, 0));  // once per block row, not per row
                      REQUIRE(log.each_byte(ids[1], 0, 1));
                    });
                REQUIRE(y.intact());
                for (std::size_t r = 0; r < rows; ++r) {
                  for (std::size_t c = 0; c < cols; ++c) {
                    const U want = from_compute<U>(
                        bop(to_compute(x.get()[r * cols + c]), to_compute(bias.get()[c])));
                    REQUIRE(same_result(y.get()[r * cols + c], want));
                  }
                }
              }
              // ---- the same as one flat elementwise pass (flat_bias_op), where that applies:
              // its own kernel's body and the one-vector kernel's, every grid ----
              const bool flat =
                  cuact::detail::flat_bias_applies<V>(x.get(), bias.get(), y.get(), cols);
              CHECK(flat == (cols >= 2 && cols % V == 0 && offset_in == 0 && offset_out == 0));
              if (flat) {
                using flat_t = cuact::detail::flat_bias_op<cuact::gelu, T, U>;
                const flat_t fop{
                    {}, {}, bias.get(), cuact::detail::fast_divmod::of(std::uint32_t(cols))};
                auto fp = cuact::detail::make_params<V>(fop, cuact::outputs(y.get()), rows * cols,
                                                        cuact::inputs<T>(x.get()));
                CHECK(fp.head + fp.tail == 0);
                auto one = cuact::detail::with_op(fp, cuact::detail::one_vector_op<flat_t>{fop});
                // the grids of thread_counts, and grids whose step is one or two whole rows; each
                // with no whole-rows step declared and with one or two rows declared (kept bias
                // vectors where that is this grid's step: flat_bias_whole_rows)
                std::vector<std::size_t> grids = thread_counts(rows * cols, V);
                grids.push_back(cols / V);
                grids.push_back(2 * cols / V);
                for (std::size_t threads : grids) {
                  for (unsigned k : {1u, 2u}) {
                    fp.vectors_per_thread = k;
                    for (std::size_t repeat : {std::size_t(0), cols, 2 * cols}) {
                      for (bool one_vector : {false, true}) {
                        CAPTURE(threads, k, repeat, one_vector);
                        fp.op.whole_rows_step = repeat;
                        one.op.whole_rows_step = repeat;
                        std::fill(y.get(), y.get() + rows * cols, from_bits<U>(0x7f));
                        access_log log;
                        const std::size_t r_x = log.add_region(x.get(), rows * cols * sizeof(T));
                        const std::size_t r_y = log.add_region(y.get(), rows * cols * sizeof(U));
                        for (std::size_t t = 0; t < threads; ++t) {
                          log.set_thread(static_cast<std::int64_t>(t));
                          if (one_vector) {
                            cuact::elementwise_thread(one, t, threads, recording_access{&log});
                          } else {
                            cuact::elementwise_thread(fp, t, threads, recording_access{&log});
                          }
                        }
                        REQUIRE(log.errors().empty());
                        REQUIRE(log.each_byte(r_x, 1, 0));
                        REQUIRE(log.each_byte(r_y, 0, 1));
                        REQUIRE(y.intact());
                        for (std::size_t i = 0; i < rows * cols; ++i) {
                          const U want = from_compute<U>(
                              bop(to_compute(x.get()[i]), to_compute(bias.get()[i % cols])));
                          REQUIRE(same_result(y.get()[i], want));
                        }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  CHECK(cases > 100);
}

// ---- the bias forward's flat pass: its division, its chunks, its rule ------------------------

TEST_CASE("fused: fast_divmod over 31-bit dividends", "[cpu][fused]") {
  using cuact::detail::fast_divmod;
  std::mt19937_64 rng(Catch::getSeed() + 29);
  for (const std::uint32_t d : {2u, 3u, 5u, 7u, 8u, 24u, 1000u, 4097u, 393216u, 1000003u,
                                (1u << 30) - 1, 1u << 30, (1u << 30) + 1, (1u << 31) - 1}) {
    CAPTURE(d);
    const fast_divmod f = fast_divmod::of(d);
    std::size_t bad = 0;
    const auto check = [&](std::uint32_t a) {
      bad += f.quotient(a) != a / d || f.remainder(a) != a % d;
    };
    for (std::uint32_t a = 0; a < 4096; ++a) check(a);
    for (std::uint32_t a = 0x7fffffffu - 4096; a < 0x7fffffffu; ++a) check(a);
    check(0x7fffffffu);
    for (int k = 0; k < 20000; ++k) {  // around multiples of d, where a rounding would show
      const std::uint32_t q = static_cast<std::uint32_t>(rng() % (0x7fffffffu / d + 1));
      const std::uint64_t m = std::uint64_t(q) * d;
      for (const std::uint64_t a : {m - 1, m, m + 1}) {
        if (a < (std::uint64_t(1) << 31)) check(static_cast<std::uint32_t>(a));
      }
      check(static_cast<std::uint32_t>(rng() & 0x7fffffffu));
    }
    CHECK(bad == 0);
  }
  CHECK(fast_divmod::divides_by(2));
  CHECK(fast_divmod::divides_by((std::size_t(1) << 31) - 1));
  CHECK_FALSE(fast_divmod::divides_by(1));
  CHECK_FALSE(fast_divmod::divides_by(std::size_t(1) << 31));
}

namespace {
/// flat_bias_op counting the columns the engine computes (vector_key: a divmod each).
template <class Flat>
struct counting_columns : Flat {
  std::size_t* columns_computed;
  CUACT_HOST_DEVICE std::uint32_t vector_key(std::size_t first) const {
    ++*columns_computed;
    return Flat::vector_key(first);
  }
  template <int Width>  // a column and its bias vector (the engine's path without kept columns)
  CUACT_HOST_DEVICE auto load_vector(std::size_t first) const {
    ++*columns_computed;
    return Flat::template load_vector<Width>(first);
  }
};
}  // namespace

TEST_CASE("fused: the flat bias pass keeps a thread's columns where a step is whole rows",
          "[cpu][fused]") {
  // the grid rule: blocks rounded up to a step of whole rows, by fewer blocks than such a step
  // takes, where the rounded grid still takes several steps; else 0 (the model's grid as it is)
  using cuact::detail::flat_bias_whole_row_blocks;
  CHECK(flat_bias_whole_row_blocks(786432, 128, 402653184, 393216, 4) == 786432);  // 4 passes
  CHECK(flat_bias_whole_row_blocks(786431, 128, 402653184, 393216, 4) == 786432);
  CHECK(flat_bias_whole_row_blocks(3145728, 128, 402653184, 393216, 4) == 0);  // one pass
  std::size_t rounded_cases = 0;
  for (const std::size_t cols : {std::size_t(8), std::size_t(40), std::size_t(4096),
                                 std::size_t(11008), std::size_t(393216), std::size_t(4000012)}) {
    for (const int width : {4, 8}) {
      if (cols % width != 0) continue;
      for (const std::size_t per_block : {std::size_t(128), std::size_t(256), std::size_t(2048)}) {
        for (const std::size_t rows : {std::size_t(1), std::size_t(5), std::size_t(4096)}) {
          const std::size_t vectors = rows * cols / width;
          for (const unsigned blocks : {1u, 7u, 1000u, 65536u, 786432u}) {
            CAPTURE(cols, width, per_block, rows, blocks);
            const unsigned got =
                flat_bias_whole_row_blocks(blocks, per_block, vectors, cols, width);
            if (got == 0) continue;
            ++rounded_cases;
            const std::size_t row_vectors = cols / width;
            CHECK(got >= blocks);
            CHECK(std::size_t(got - blocks) < row_vectors);
            CHECK(std::size_t(got) * per_block * width % cols == 0);
            CHECK(std::size_t(got) * per_block < vectors);
          }
        }
      }
    }
  }
  CHECK(rounded_cases > 20);

  // the engine: one column (divmod) per thread and vector slot where the grid's step is the
  // declared whole-rows step, one per vector otherwise; the same results either way
  using flat_t = cuact::detail::flat_bias_op<cuact::relu, float, float>;
  const std::size_t rows = 6, cols = 16;  // 4 vectors a row
  std::vector<float> x(rows * cols), bias(cols), y(rows * cols);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = hash_value<float>(31, i);
  for (std::size_t c = 0; c < cols; ++c) bias[c] = hash_value<float>(32, c);
  std::size_t computed = 0;
  for (const std::size_t threads : {std::size_t(4), std::size_t(8), std::size_t(5)}) {
    for (const std::size_t declared : {std::size_t(0), cols, 2 * cols}) {
      for (const unsigned k : {1u, 2u}) {
        CAPTURE(threads, declared, k);
        flat_t flat{{}, {}, bias.data(), cuact::detail::fast_divmod::of(std::uint32_t(cols))};
        flat.whole_rows_step = declared;
        auto params = cuact::detail::make_params<4>(counting_columns<flat_t>{flat, &computed},
                                                    cuact::outputs(y.data()), rows * cols,
                                                    cuact::inputs<float>(x.data()), k);
        std::fill(y.begin(), y.end(), -1.0f);
        computed = 0;
        for (std::size_t t = 0; t < threads; ++t) cuact::elementwise_thread(params, t, threads);
        const std::size_t slots = threads * params.effective_vectors_per_thread();
        const bool kept = slots * 4 == declared;
        CHECK(computed == (kept ? slots : rows * cols / 4));
        for (std::size_t i = 0; i < x.size(); ++i) {
          const float want = cuact::relu{}(x[i] + bias[i % cols]);
          REQUIRE(std::memcmp(&y[i], &want, sizeof(float)) == 0);
        }
      }
    }
  }
}

TEST_CASE("fused: the bias forward's flat chunks and its rule against the walk", "[cpu][fused]") {
  // chunks of whole rows, each below 2^31 elements and as large as that allows
  for (const std::size_t cols : {std::size_t(2), std::size_t(3), std::size_t(393216),
                                 std::size_t(1) << 30, (std::size_t(1) << 31) - 1}) {
    const std::size_t rows = cuact::detail::flat_bias_chunk_rows(cols);
    CAPTURE(cols, rows);
    CHECK(rows >= 1);
    CHECK(rows * cols < cuact::detail::fast_divmod_limit);
    CHECK((rows + 1) * cols >= cuact::detail::fast_divmod_limit);
  }
  // the walk only for a compute-bound forward on 16-bit data where the device's budget is tight
  using cuact::detail::bias_walks;
  using cuact::detail::cost_hint;
  const cuact::detail::device_facts h100 = model_h100, h200 = model_h200;
  CHECK(bias_walks(h200, cost_hint::compute_bound, 4, 2));        // gelu bf16: 0.955 vs 0.938
  CHECK_FALSE(bias_walks(h100, cost_hint::compute_bound, 4, 2));  // 0.981 vs 1.000
  CHECK_FALSE(bias_walks(h200, cost_hint::compute_bound, 8, 2));  // gelu fp32: 0.909 vs 0.938
  CHECK_FALSE(
      bias_walks(h200, cost_hint::compute_bound, 6, 2));  // fp32 -> bf16: 6 bytes, not tight
  CHECK_FALSE(bias_walks(h200, cost_hint::heavy, 4, 2));  // silu bf16: 0.972 vs 0.990
  CHECK_FALSE(bias_walks(h200, cost_hint::light, 4, 2));  // relu bf16: 0.990 vs 1.002
}

// ---- bias backward: two stages, a fixed summation order ---------------------------------------

TEMPLATE_TEST_CASE("fused: bias backward stages under simulated grids", "[cpu][fused]", float,
                   __nv_bfloat16, __half, double) {
  using T = TestType;
  using A = compute_t<T>;
  constexpr int V = 16 / sizeof(T);
  for (std::size_t rows : {1, 2, 7, 300}) {
    for (std::size_t cols : {1, 3, 8, 9, 40}) {
      for (std::size_t offset : {0, 1}) {
        CAPTURE(type_name<T>(), rows, cols, offset);
        const std::size_t n = rows * cols;
        guarded<T> x(n, offset), dy(n, offset), dx(n, offset), bias(cols, offset);
        for (std::size_t i = 0; i < n; ++i) {
          // finite values in [-4, 4): the sums stay finite, so the order check is meaningful
          x.get()[i] =
              round_to<T>(std::ldexp(static_cast<double>(mix64(i * 3 + 1) % 4096) - 2048, -9));
          dy.get()[i] =
              round_to<T>(std::ldexp(static_cast<double>(mix64(i * 5 + 2) % 4096) - 2048, -9));
        }
        for (std::size_t c = 0; c < cols; ++c)
          bias.get()[c] = round_to<T>(0.25 * static_cast<double>(c % 7) - 0.75);
        const cuact::bias_gradient_op<cuact::gelu, T> op{{}, {}};
        // a small thread target forces several chunks even for these small shapes
        const cuact::detail::row_chunks chunks = cuact::detail::bias_gradient_chunks(rows, cols, V);
        REQUIRE(chunks.chunks * chunks.rows_per_chunk >= rows);
        REQUIRE((chunks.chunks - 1) * chunks.rows_per_chunk < rows);
        std::vector<A> partial(chunks.chunks * cols);
        auto p = cuact::detail::make_bias_gradient_params<V>(op, x.get(), bias.get(), dy.get(),
                                                             dx.get(), partial.data(), rows, cols);
        for (std::size_t per_chunk : {chunks.rows_per_chunk, std::size_t(1), std::size_t(3)}) {
          p.rows_per_chunk = per_chunk;  // any chunking is correct; the entry's is shape-only
          const std::size_t chunk_count = (rows + per_chunk - 1) / per_chunk;
          partial.assign(chunk_count * cols, A(-1));
          // the launch's own thread count along the columns among them
          const std::size_t launched =
              std::size_t(cuact::detail::bias_gradient_launch_grid(p, chunks).x) *
              cuact::detail::bias_gradient_block_threads;
          for (std::size_t threads : {std::size_t(1), std::size_t(5), cols + 3, launched}) {
            std::fill(dx.get(), dx.get() + n, from_bits<T>(0x7f));
            for (std::size_t k = 0; k < chunk_count; ++k) {
              access_log log;
              const std::size_t first = k * per_chunk, end = std::min(rows, first + per_chunk);
              const std::size_t r_x =
                  log.add_region(x.get() + first * cols, (end - first) * cols * sizeof(T));
              const std::size_t r_dy =
                  log.add_region(dy.get() + first * cols, (end - first) * cols * sizeof(T));
              const std::size_t r_dx =
                  log.add_region(dx.get() + first * cols, (end - first) * cols * sizeof(T));
              const std::size_t r_b = log.add_region(bias.get(), cols * sizeof(T));
              const std::size_t r_p = log.add_region(partial.data() + k * cols, cols * sizeof(A));
              for (std::size_t t = 0; t < threads; ++t) {
                log.set_thread(static_cast<std::int64_t>(t));
                cuact::detail::bias_gradient_thread(p, k, t, threads, recording_access{&log});
              }
              INFO((log.errors().empty() ? std::string() : log.errors().front()));
              REQUIRE(log.errors().empty());
              REQUIRE(log.each_byte(r_x, 1, 0));
              REQUIRE(log.each_byte(r_dy, 1, 0));
              REQUIRE(log.each_byte(r_dx, 0, 1));
              REQUIRE(log.each_byte(r_b, 1, 0));
              REQUIRE(log.each_byte(r_p, 0, 1));
            }
            REQUIRE(dx.intact());
            std::vector<T> dbias(cols);
            access_log log;
            const std::size_t r_p = log.add_region(partial.data(), partial.size() * sizeof(A));
            const std::size_t r_out = log.add_region(dbias.data(), cols * sizeof(T));
            for (std::size_t t = 0; t < 4; ++t) {
              log.set_thread(static_cast<std::int64_t>(t));
              cuact::detail::column_sum_thread(partial.data(), chunk_count, cols, dbias.data(), t,
                                               4, recording_access{&log});
            }
            REQUIRE(log.errors().empty());
            REQUIRE(log.each_byte(r_p, 1, 0));
            REQUIRE(log.each_byte(r_out, 0, 1));
            for (std::size_t c = 0; c < cols; ++c) {
              A total = 0;  // the documented order: rows within a chunk, then chunks
              double exact = 0;
              for (std::size_t k = 0; k < chunk_count; ++k) {
                A chunk_sum = 0;
                for (std::size_t r = k * per_chunk; r < std::min(rows, (k + 1) * per_chunk); ++r) {
                  const T want = from_compute<T>(op(to_compute(x.get()[r * cols + c]),
                                                    to_compute(bias.get()[c]),
                                                    to_compute(dy.get()[r * cols + c])));
                  REQUIRE(same_result(dx.get()[r * cols + c], want));
                  chunk_sum += static_cast<A>(to_compute(want));
                  exact += to_double(want);
                }
                total = k == 0 ? chunk_sum : total + chunk_sum;
              }
              REQUIRE(same_result(dbias[c], from_compute<T>(total)));
              CHECK(close_to(dbias[c], exact, 1, 1e-5 * rows));
            }
          }
        }
      }
    }
  }
  // the chunking is a function of the shape alone, and covers the target of threads
  const auto c1 = cuact::detail::bias_gradient_chunks(4096, 393216, 4);
  CHECK(c1.chunks == 22);
  CHECK(c1.rows_per_chunk == 187);
  const auto c2 = cuact::detail::bias_gradient_chunks(1 << 20, 16, 4);
  CHECK(c2.chunks <= 65535);
  CHECK(c2.chunks * c2.rows_per_chunk >= (1u << 20));
}

TEST_CASE("fused: the bias backward's capped stage 1 where resident loads fall short",
          "[cpu][fused]") {
  using cuact::detail::bias_gradient_capped;
  using cuact::detail::kernel_facts;
  const cuact::detail::device_facts h100 = model_h100, h200 = model_h200;
  // resident blocks of 128 threads, each thread one row of x and dy in 16-byte vectors (32 bytes)
  const kernel_facts relu32{6, 80}, threshold32{7, 72}, gelu32{9, 56}, gelu16{8, 64}, capped{8, 64};
  CHECK(bias_gradient_capped(h200, relu32, capped, 32));
  CHECK_FALSE(bias_gradient_capped(h100, relu32, capped, 32));
  CHECK(bias_gradient_capped(h200, threshold32, capped, 32));
  CHECK_FALSE(bias_gradient_capped(h100, threshold32, capped, 32));
  CHECK_FALSE(bias_gradient_capped(h200, gelu32, capped, 32));  // capped lost 1.2%
  CHECK_FALSE(bias_gradient_capped(h200, gelu16, capped, 32));  // capped lost 0.5-3.6%
  // never to a kernel with no more resident blocks than the compiler's own, nor one that spills
  CHECK_FALSE(bias_gradient_capped(h200, kernel_facts{8, 64}, kernel_facts{8, 64}, 4));
  CHECK_FALSE(bias_gradient_capped(h200, kernel_facts{5, 112}, kernel_facts{8, 64, 90, 72}, 32));
}

// ---- quantize: the per-thread body and its amax -----------------------------------------------

/// The host's float table of fn (what fill_bf16_table_kernel writes for a tabulated quantize).
template <class Fn>
std::vector<float> host_float_table(const Fn& fn) {
  std::vector<float> entries(cuact::detail::bf16_table_window::entries_of<float>);
  for (unsigned s = 0; s < cuact::detail::bf16_table_window::entries_of<float>; ++s) {
    entries[s] = cuact::detail::bf16_float_table_entry(fn, s);
  }
  return entries;
}

/// quantize_thread over simulated grids: every byte of x read once and of out written once, the
/// guards intact, the amax and each element as the direct op (amax_op) gives them; the scale from
/// the op or from memory. Tabulated: the op run is the bf16 table's (bf16_table_quantize_op, its
/// table built here), which must give the direct op's bytes and amax.
template <class T, class Activation, int V, bool Tabulated = false>
void check_quantize_body() {
  using cuact::detail::to_compute;
  using fn_t = cuact::forward_op<Activation, __nv_fp8_e4m3>;
  [[maybe_unused]] const std::vector<float> entries =
      Tabulated ? host_float_table(fn_t{}) : std::vector<float>{};
  for (std::size_t n : {1, 3, 4, 5, 37, 100, 1000}) {
    for (std::size_t offset : {0, 1, 2}) {
      CAPTURE(n, offset);
      guarded<T> x(n, offset);
      guarded<__nv_fp8_e4m3> out(n, offset);
      for (std::size_t i = 0; i < n; ++i) x.get()[i] = hash_value<T>(12, i);
      const float scale = 0.5f;
      const cuact::detail::amax_op<Activation, __nv_fp8_e4m3> op{{}, {}, scale, nullptr};
      float want_amax = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const float y =
            cuact::forward_op<Activation, __nv_fp8_e4m3>{{}, {}}(to_compute(x.get()[i]));
        if (std::fabs(y) > want_amax) want_amax = std::fabs(y);
      }
      // the scale in the op (forward_quantize's float), or read from a "device" float that
      // overrides the op's (its pointer overload passes an op whose scale is 1)
      for (const bool scale_in_memory : {false, true}) {
        auto held = [&] {
          if constexpr (Tabulated) {
            return cuact::detail::bf16_table_quantize_op<fn_t, __nv_fp8_e4m3>{
                {}, entries.data(), scale, nullptr};
          } else {
            return op;
          }
        }();
        if (scale_in_memory) held.scale = 7.0f;
        const float* scale_pointer = scale_in_memory ? &scale : nullptr;
        const auto p = cuact::detail::make_params<V>(held, cuact::outputs(out.get()), n,
                                                     cuact::inputs(x.get()));
        for (std::size_t threads : {std::size_t(1), std::size_t(7), n + 2}) {
          CAPTURE(scale_in_memory, threads);
          access_log log;
          const std::size_t r_x = log.add_region(x.get(), n * sizeof(T));
          const std::size_t r_out = log.add_region(out.get(), n);
          float amax = 0;
          for (std::size_t t = 0; t < threads; ++t) {
            log.set_thread(static_cast<std::int64_t>(t));
            amax = std::max(amax, cuact::detail::quantize_thread(p, scale_pointer, t, threads,
                                                                 recording_access{&log}));
          }
          REQUIRE(log.errors().empty());
          REQUIRE(log.each_byte(r_x, 1, 0));
          REQUIRE(log.each_byte(r_out, 0, 1));
          REQUIRE(out.intact());
          CHECK(amax == want_amax);
          for (std::size_t i = 0; i < n; ++i) {
            float ignored = 0;
            auto single = op;
            single.amax = &ignored;
            REQUIRE(same_result(out.get()[i],
                                from_compute<__nv_fp8_e4m3>(single(to_compute(x.get()[i])))));
          }
        }
      }
    }
  }
}

TEST_CASE("fused: quantize body under simulated grids", "[cpu][fused]") {
  using cuact::detail::auto_width_tag;
  using cuact::detail::type_list;
  constexpr auto width = [](auto out, auto in) {
    return cuact::detail::elementwise_width<auto_width_tag>(type_list<decltype(out)>{},
                                                            type_list<decltype(in)>{});
  };
  // the widths forward_quantize takes (run_quantize: elementwise_width's): fp32 in 16-byte loads;
  // 16-bit data in 16-element vectors, so each fp8 store is 16 bytes (compute-bound gelu too)
  STATIC_REQUIRE(width(__nv_fp8_e4m3{}, float{}) == 4);
  STATIC_REQUIRE(width(__nv_fp8_e4m3{}, __nv_bfloat16{}) == 16);
  STATIC_REQUIRE(width(__nv_fp8_e5m2{}, __half{}) == 16);
  STATIC_REQUIRE(width(__nv_fp8_e4m3{}, double{}) == 2);
  check_quantize_body<float, cuact::gelu, 4>();
  check_quantize_body<__nv_bfloat16, cuact::silu, 16>();
  check_quantize_body<__nv_bfloat16, cuact::gelu, 16>();
  check_quantize_body<__nv_bfloat16, cuact::gelu, 8>();  // a caller's explicit width
  // the tabulated quantize (bf16 through a float table) as forward_quantize launches it, and in
  // 8-element vectors (a caller's explicit width)
  check_quantize_body<__nv_bfloat16, cuact::gelu, 16, true>();
  check_quantize_body<__nv_bfloat16, cuact_test::plain::softplus, 16, true>();
  check_quantize_body<__nv_bfloat16, cuact::gelu_tanh, 8, true>();
}

/// The tabulated quantize's op against the direct one (amax_op) for every bf16 input: each lane of
/// a held vector (as the engine passes it to apply_held), converted as the engine converts a
/// vector, and each scalar; the amax over all of them. Returns the inputs whose results differ.
template <class U, class Activation>
std::size_t tabulated_quantize_differences(const Activation& act, std::string& first,
                                           std::size_t& vectors_inside) {
  using cuact::detail::bf16_table_window;
  constexpr int width = 16;
  const float scale = 0.75f;
  using fn_t = cuact::forward_op<Activation, U>;
  const std::vector<float> entries = host_float_table(fn_t{{}, act});
  float table_amax = 0, direct_amax = 0;
  const cuact::detail::bf16_table_quantize_op<fn_t, U> table{
      {{}, act}, entries.data(), scale, &table_amax};
  const cuact::detail::amax_op<Activation, U> direct{{}, act, scale, &direct_amax};
  std::size_t differ = 0;
  vectors_inside = 0;
  for (unsigned b = 0; b < 65536; b += width) {
    cuact::detail::vector_of<std::uint32_t, width / 2> words;
    unsigned outside = 0;
    for (int w = 0; w < width / 2; ++w) {
      // a lane from the other end of the patterns beside each, so every pair of halves mixes
      words.elements[w] = (b + 2 * w) | ((65535u - b - 2 * w) << 16);
      outside |= bf16_table_window::offset(words.elements[w] & 0xffffu) |
                 bf16_table_window::offset(words.elements[w] >> 16);
    }
    vectors_inside += outside < bf16_table_window::per_sign;
    const auto got = table.template apply_held<width>(words);
    float values[width];
    for (int lane = 0; lane < width; ++lane) {
      const unsigned bits = (words.elements[lane / 2] >> (16 * (lane % 2))) & 0xffffu;
      values[lane] = direct(cuda::std::bit_cast<float>(bits << 16));
    }
    const auto want = cuact::detail::convert_vector<U>(values);
    for (int lane = 0; lane < width; ++lane) {
      const unsigned bits = (words.elements[lane / 2] >> (16 * (lane % 2))) & 0xffffu;
      const float x = cuda::std::bit_cast<float>(bits << 16);
      const float scalar = table(x), scalar_want = direct(x);
      const bool same_scalar = std::memcmp(&scalar, &scalar_want, sizeof(float)) == 0;
      if ((got.elements[lane].__x != want.elements[lane].__x || !same_scalar) && differ++ == 0) {
        first = "x bits " + std::to_string(bits) + ": got " + describe(got.elements[lane]) +
                ", direct " + describe(want.elements[lane]) + ", scalar " + describe(scalar) +
                " against " + describe(scalar_want);
      }
    }
  }
  if (table_amax != direct_amax && differ++ == 0) {
    first = "amax " + describe(table_amax) + " against " + describe(direct_amax);
  }
  return differ;
}

TEST_CASE("fused: a 16-lane 16-bit vector's two loads tied into its first word", "[cpu][fused]") {
  // elementwise.cuh, with_loads_tied: with the run-time zero the words are unchanged; with all
  // bits set the first word carries the second load's first word (the dependency that keeps ptxas
  // from issuing that load after the first eight lanes' math); one load is left as it is
  using cuact::detail::vector_of;
  using cuact::detail::with_loads_tied;
  const vector_of<std::uint32_t, 8> two_loads{{0x11, 0x22, 0x33, 0x44, 0x500, 0x66, 0x77, 0x88}};
  const auto kept = with_loads_tied(two_loads, 0u);
  CHECK(std::memcmp(&kept, &two_loads, sizeof(kept)) == 0);
  const auto tied = with_loads_tied(two_loads, ~0u);
  CHECK(tied.elements[0] == (0x11u | 0x500u));
  for (int w = 1; w < 8; ++w) CHECK(tied.elements[w] == two_loads.elements[w]);
  const vector_of<std::uint32_t, 4> one_load{{0x11, 0x22, 0x33, 0x44}};
  CHECK(with_loads_tied(one_load, ~0u).elements[0] == 0x11u);
  const vector_of<float, 4> floats{{1.0f, 2.0f, 3.0f, 4.0f}};
  CHECK(with_loads_tied(floats, ~0u).elements[0] == 1.0f);
}

TEST_CASE("fused: the tabulated quantize gives the direct bytes and amax for every bf16 input",
          "[cpu][fused][table]") {
  std::string first;
  std::size_t inside = 0;
  // the sweep holds vectors wholly in the window and vectors with lanes outside it (+-0 among
  // them), whose lanes are looked up and then replaced
  CHECK(tabulated_quantize_differences<__nv_fp8_e4m3>(cuact::gelu{}, first, inside) == 0);
  CHECK(inside > 100);
  CHECK(tabulated_quantize_differences<__nv_fp8_e5m2>(cuact::gelu{}, first, inside) == 0);
  CHECK(tabulated_quantize_differences<__nv_fp8_e4m3>(cuact::gelu_tanh{}, first, inside) == 0);
  CHECK(tabulated_quantize_differences<__nv_fp8_e4m3>(cuact_test::plain::softplus{}, first,
                                                      inside) == 0);
  CHECK(tabulated_quantize_differences<__nv_fp8_e5m2>(cuact::leaky_relu{0.25}, first, inside) == 0);
  CAPTURE(first);
  CHECK(first.empty());
  // which calls take the table: bf16 -> fp8 of an unhinted functor, from tabulated_min_elements
  // (compute-bound gelu and gelu_tanh quantize directly, in 16-element vectors)
  using cuact::detail::cost_hint;
  using cuact::detail::tabulates;
  const std::size_t at = cuact::detail::tabulated_min_elements;
  STATIC_REQUIRE(tabulates(cost_hint::estimate, at));
  STATIC_REQUIRE_FALSE(tabulates(cost_hint::compute_bound, at));
  STATIC_REQUIRE_FALSE(tabulates(cost_hint::heavy, at));
  STATIC_REQUIRE_FALSE(tabulates(cost_hint::light, at));
  STATIC_REQUIRE_FALSE(tabulates(cost_hint::estimate, at - 1));
  // its shape: 512-thread blocks, one vector per thread, 32 passes
  const auto shape = cuact::detail::tabulated_quantize_launch_shape(std::size_t(1) << 26, 5);
  CHECK(shape.threads_per_block == 512);
  CHECK(shape.vectors_per_thread == 1);
  CHECK(std::size_t(shape.blocks) * 512 * 32 == std::size_t(1) << 26);
  CHECK(cuact::detail::tabulated_quantize_launch_shape(3, 700).blocks == 2);
  // and forward_cast's width from a 2-byte type to a 1-byte one: 16 elements (16-byte stores)
  using cuact::detail::elementwise_width;
  using cuact::detail::type_list;
  constexpr int cast16 = elementwise_width<cuact::detail::auto_width_tag>(
      type_list<__nv_fp8_e4m3>{}, type_list<__nv_bfloat16>{});
  constexpr int cast32 = elementwise_width<cuact::detail::auto_width_tag>(
      type_list<__nv_fp8_e4m3>{}, type_list<float>{});
  constexpr int gated = elementwise_width<cuact::detail::auto_width_tag>(
      type_list<__nv_fp8_e4m3>{}, type_list<__nv_bfloat16, __nv_bfloat16>{});
  STATIC_REQUIRE(cast16 == 16);
  STATIC_REQUIRE(cast32 == 4);
  STATIC_REQUIRE(gated == 8);
  STATIC_REQUIRE(elementwise_width<8>(type_list<__nv_fp8_e4m3>{}, type_list<__half>{}) == 8);
}

TEST_CASE("fused: the direct quantize's shape from the model's", "[cpu][fused][launch]") {
  using cuact::detail::launch_shape;
  using cuact::detail::quantize_launch_shape;
  using cuact::detail::quantize_min_blocks;
  // a light op in 128-thread blocks (the H200's relu fp32 -> e4m3): 256-thread blocks, the same
  // threads in all, then a quarter of the blocks in four times the passes
  const launch_shape light = quantize_launch_shape({786432, 128, 2, 1, false});
  CHECK(light.threads_per_block == 256);
  CHECK(light.blocks == 786432 / 2 / 4);
  CHECK(light.vectors_per_thread == 2);
  CHECK(light.passes == 4);
  // a heavy one keeps its blocks (only the passes change)
  const launch_shape heavy = quantize_launch_shape({393216, 128, 2, 2, true});
  CHECK(heavy.threads_per_block == 128);
  CHECK(heavy.blocks == 393216 / 4);
  CHECK(heavy.passes == 8);
  // wide blocks and short grids stay as the model has them
  const launch_shape wide = quantize_launch_shape({24576, 1024, 1, 4, false});
  CHECK(wide.threads_per_block == 1024);
  CHECK(wide.blocks == 24576);
  CHECK(wide.passes == 4);
  const launch_shape short_grid =
      quantize_launch_shape({4 * quantize_min_blocks - 1, 256, 1, 1, true});
  CHECK(short_grid.blocks == 4 * quantize_min_blocks - 1);
  CHECK(short_grid.passes == 1);
  // a small light grid: at least one block
  CHECK(quantize_launch_shape({1, 64, 1, 1, false}).blocks == 1);
  CHECK(quantize_launch_shape({3, 96, 1, 1, false}).threads_per_block == 256);
}

// ---- launch grid and argument checks (no GPU needed: they reject before any CUDA call) ---------

TEST_CASE("fused: rows grid", "[cpu][fused]") {
  using cuact::detail::rows_grid_for;
  auto g = rows_grid_for(4096, 98304, 0, 1, 1, 128);  // one vector per thread, one row each
  CHECK(g.blocks_x == 768);
  CHECK(g.blocks_y == 4096);
  g = rows_grid_for(4096, 98304, 0, 2, 2, 128);  // two vectors along the row, two rows each
  CHECK(g.blocks_x == 384);
  CHECK(g.blocks_y == 2048);
  g = rows_grid_for(4096, 98304, 0, 1, 4, 128);  // walking columns: 2 rows in flight x 2 passes
  CHECK(g.blocks_x == 768);
  CHECK(g.blocks_y == 1024);
  g = rows_grid_for(1 << 20, 10, 3, 2, 1, 128);
  CHECK(g.blocks_x == 1);
  CHECK(g.blocks_y == 65535);
  g = rows_grid_for(101, 1000, 0, 2, 2, 128);
  CHECK(g.blocks_x == 4);
  CHECK(g.blocks_y == 51);
  g = rows_grid_for(1, 0, 1, 1, 1, 128);  // one column, scalar
  CHECK(g.blocks_x == 1);
  CHECK(g.blocks_y == 1);
}

TEST_CASE("fused: arguments rejected before any launch", "[cpu][fused]") {
  std::vector<float> host(1024);
  float* p = host.data();
  const float* q = host.data() + 512;
  const auto invalid = cudaErrorInvalidValue;
  const std::size_t huge = std::numeric_limits<std::size_t>::max() / 2;
  // null
  CHECK(cuact::gated_forward(cuact::silu{}, static_cast<const float*>(nullptr), q, p, 8) ==
        invalid);
  CHECK(cuact::gated_forward_packed(cuact::silu{}, static_cast<const float*>(nullptr), p, 2, 4) ==
        invalid);
  CHECK(cuact::bias_forward(cuact::gelu{}, q, static_cast<const float*>(nullptr), p, 2, 4) ==
        invalid);
  CHECK(cuact::bias_backward(cuact::gelu{}, q, q + 8, q + 16, p, static_cast<float*>(nullptr), 2,
                             4) == invalid);
  CHECK(cuact::forward_quantize(cuact::gelu{}, q, reinterpret_cast<__nv_fp8_e4m3*>(p), 8, 1.0f,
                                nullptr) == invalid);
  CHECK(cuact::forward_quantize(cuact::gelu{}, q, reinterpret_cast<__nv_fp8_e4m3*>(p), 8,
                                static_cast<const float*>(nullptr), p + 8) == invalid);  // scale
  // overlap: an output over an input other than exactly, outputs over each other
  CHECK(cuact::gated_forward(cuact::silu{}, q, q + 8, const_cast<float*>(q) + 4, 8) == invalid);
  CHECK(cuact::gated_backward(cuact::silu{}, q, q + 16, q + 32, p, p + 4, 8) == invalid);
  CHECK(cuact::gated_forward_packed(cuact::silu{}, q, const_cast<float*>(q) + 8, 2, 4) ==
        invalid);  // out inside ab
  CHECK(cuact::gated_backward_packed(cuact::silu{}, q, q + 16, const_cast<float*>(q) + 2, 2, 4) ==
        invalid);
  CHECK(cuact::bias_forward(cuact::gelu{}, q, q + 8, const_cast<float*>(q) + 8, 2, 4) ==
        invalid);  // out over bias
  CHECK(cuact::bias_backward(cuact::gelu{}, q, q + 8, q + 16, p, p + 4, 2, 4) ==
        invalid);  // dbias inside dx
  CHECK(cuact::forward_quantize(cuact::gelu{}, q, reinterpret_cast<__nv_fp8_e4m3*>(p), 8, 1.0f,
                                p + 1) == invalid);
  CHECK(cuact::forward_quantize(cuact::gelu{}, q, reinterpret_cast<__nv_fp8_e4m3*>(p), 8, p + 1,
                                p + 8) == invalid);  // the device scale inside out
  CHECK(cuact::forward_quantize(cuact::gelu{}, q, reinterpret_cast<__nv_fp8_e4m3*>(p), 8, p + 8,
                                p + 8) == invalid);  // the device scale is the amax
  // rows * cols overflowing size_t
  CHECK(cuact::gated_forward_packed(cuact::silu{}, q, p, huge, 2) == invalid);
  CHECK(cuact::gated_backward_packed(cuact::silu{}, q, q, p, huge / 2 + 1, 2) == invalid);
  CHECK(cuact::bias_forward(cuact::gelu{}, q, q, p, 3, huge) == invalid);
  CHECK(cuact::bias_backward(cuact::gelu{}, q, q, q, p, p + 512, huge, 4) == invalid);
  // misaligned
  const float* odd = reinterpret_cast<const float*>(reinterpret_cast<const char*>(q) + 1);
  CHECK(cuact::gated_forward(cuact::silu{}, odd, q, p, 8) == invalid);
  CHECK(cuact::bias_forward(cuact::gelu{}, q, odd, p, 2, 4) == invalid);
  CHECK(cuact::gated_backward_packed(cuact::silu{}, odd, q, p, 2, 4) == invalid);
  // workspace too small
  CHECK(cuact::bias_backward(cuact::gelu{}, q, q + 8, q + 16, p, p + 8, 2, 4, p + 64, 4) ==
        invalid);
  // nothing to do
  CHECK(cuact::gated_forward(cuact::silu{}, q, q, p, 0) == cudaSuccess);
  CHECK(cuact::gated_forward_packed(cuact::silu{}, q, p, 0, 4) == cudaSuccess);
  CHECK(cuact::bias_forward(cuact::gelu{}, q, q, p, 4, 0) == cudaSuccess);
  CHECK(cuact::bias_backward(cuact::gelu{}, q, q, q, p, p, 4, 0) == cudaSuccess);
  CHECK(cuact::forward_quantize(cuact::gelu{}, q, reinterpret_cast<__nv_fp8_e4m3*>(p), 0,
                                static_cast<const float*>(nullptr), p) == cudaSuccess);
}
