// Gates on the host (include/cuact/gate.cuh): gpt-oss's clamped SwiGLU forward and (da, db)
// through the fused ops' per-element bodies (gate_op, gate_gradient_op) against float64
// references, over hashed values and a grid of edge values (+-limit and its neighbours, +-inf,
// NaN, +-0, denormals, values on both sides of the clamp) for every dtype; the selection
// gradient for an infinite dy; a user's gate with partial derivatives only; the concept traits;
// and the packed rows body under simulated grids for the clamped gate.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <cuact/cuact.cuh>

#include "catch.hpp"
#include "fused_reference.hpp"
#include "gate_reference.hpp"
#include "support.hpp"

using namespace cuact_test;
using cuact::detail::compute_t;
using cuact::detail::from_compute;
using cuact::detail::to_compute;

namespace {

/// A gate of the concept's minimal backward form: k a b with its partials, no gradient().
struct scaled_product {
  double k = 1.0;
  template <class C>
  CUACT_HOST_DEVICE C operator()(C a, C b) const {
    return C(k) * a * b;
  }
  template <class C>
  CUACT_HOST_DEVICE C partial_a(C, C b) const {
    return C(k) * b;
  }
  template <class C>
  CUACT_HOST_DEVICE C partial_b(C a, C) const {
    return C(k) * a;
  }
};

/// A gate without a backward.
struct forward_only_gate {
  template <class C>
  CUACT_HOST_DEVICE C operator()(C a, C b) const {
    return a - b;
  }
};

static_assert(cuact::has_gate_backward_v<cuact::clamped_swiglu>);
static_assert(cuact::has_gate_backward_v<scaled_product>);
static_assert(!cuact::has_gate_backward_v<forward_only_gate>);
static_assert(cuact::has_gate_backward_v<cuact::activation_gate<cuact::silu>>);
static_assert(cuact::is_heavy_v<cuact::gate_op<cuact::clamped_swiglu, float>>);
static_assert(!cuact::is_heavy_v<cuact::gated_op<cuact::relu, float>>);
static_assert(cuact::is_heavy_v<cuact::gated_op<cuact::silu, float>>);

/// Edge values of T around the clamp at +-limit and the special classes.
template <class T>
std::vector<T> edge_values(double limit) {
  const double u = ulp_of<T>(limit);
  std::vector<double> v = {0.0,
                           -0.0,
                           limit,
                           -limit,
                           limit - u,
                           limit + u,
                           -limit - u,
                           -limit + u,
                           2 * limit,
                           -2 * limit,
                           1.0,
                           -1.0,  // clamp(b) + 1 = 0
                           -1.0 + ulp_of<T>(1.0),
                           0.5,
                           -0.5,
                           -1.28 / 1.702,  // near silu_alpha's minimum, its derivative crossing 0
                           -30.0,
                           -60.0,  // sigmoid(alpha x) near float's underflow
                           -1e4,
                           ulp_of<T>(0.0),  // the smallest denormal
                           -ulp_of<T>(0.0),
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN()};
  std::vector<T> out;
  for (double d : v) out.push_back(round_to<T>(d));
  out.push_back(round_to<T>(std::ldexp(1.0, -format_of<T>::bias + 1)));  // the smallest normal
  return out;
}

/// Checks the clamped gate's ops at (a, b, dy) against the reference; returns the failures.
template <class T>
std::size_t check_clamped(const cuact::clamped_swiglu& gate, T a, T b, T dy) {
  const cuact::gate_op<cuact::clamped_swiglu, T> forward{{}, gate};
  const cuact::gate_gradient_op<cuact::clamped_swiglu, T> backward{{}, gate};
  const T out = from_compute<T>(forward(to_compute(a), to_compute(b)));
  const auto [da, db] = backward(to_compute(a), to_compute(b), to_compute(dy));
  const std::string off =
      clamped_off<T>(gate, a, b, dy, out, from_compute<T>(da), from_compute<T>(db));
  if (off.empty()) return 0;
  FAIL_CHECK(type_name<T>() << off << ": a=" << describe(a) << " b=" << describe(b) << " dy="
                            << describe(dy) << " alpha=" << gate.alpha << " limit=" << gate.limit
                            << " out " << describe(out) << " da " << describe(from_compute<T>(da))
                            << " db " << describe(from_compute<T>(db)));
  return 1;
}

}  // namespace

TEMPLATE_TEST_CASE("gate: clamped SwiGLU against float64 over hashed and edge values",
                   "[cpu][gate]", CUACT_TEST_DTYPES) {
  using T = TestType;
  const cuact::clamped_swiglu gpt_oss{};
  CHECK(gpt_oss.alpha == 1.702);
  CHECK(gpt_oss.limit == 7.0);
  for (const cuact::clamped_swiglu gate :
       {gpt_oss, cuact::clamped_swiglu{1.0, 3.5}, cuact::clamped_swiglu{2.5, 10.0}}) {
    CAPTURE(gate.alpha, gate.limit);
    std::size_t bad = 0;
    constexpr std::size_t n = 1 << 14;
    const auto a = hashed<T>(11, n), b = hashed<T>(12, n), dy = hashed<T>(13, n);
    for (std::size_t i = 0; i < n; ++i) bad += check_clamped<T>(gate, a[i], b[i], dy[i]);
    const auto edges = edge_values<T>(gate.limit);
    const std::vector<T> dys = {round_to<T>(1.0), round_to<T>(-2.5), round_to<T>(0.0),
                                round_to<T>(std::numeric_limits<double>::infinity()),
                                round_to<T>(std::numeric_limits<double>::quiet_NaN())};
    for (T ea : edges) {
      for (T eb : edges) {
        for (T ed : dys) bad += check_clamped<T>(gate, ea, eb, ed);
      }
    }
    CHECK(bad == 0);
  }
}

TEST_CASE("gate: the clamped SwiGLU's clamps and NaN rules", "[cpu][gate]") {
  const cuact::clamped_swiglu g{};
  const double inf = std::numeric_limits<double>::infinity();
  const auto fwd = [&](double a, double b) { return g(a, b); };
  const auto grad = [&](double dy, double a, double b) { return g.gradient(dy, a, b); };
  // forward: a clamped above only, b on both sides; NaN in either stays NaN; a = -inf: NaN
  CHECK(fwd(100.0, 0.0) == fwd(7.0, 0.0));
  CHECK(fwd(-3.0, 100.0) == fwd(-3.0, 7.0));
  CHECK(fwd(-3.0, -100.0) == fwd(-3.0, -7.0));
  CHECK(fwd(-3.0, -100.0) != fwd(-4.0, -100.0));  // a not clamped below
  CHECK(std::isnan(fwd(NAN, 0.5)));
  CHECK(std::isnan(fwd(0.5, NAN)));
  CHECK(std::isnan(fwd(-inf, 0.5)));
  CHECK(fwd(inf, 0.0) == fwd(7.0, 0.0));
  CHECK(fwd(1.0, -1.0) == 0.0);  // clamp(b) + 1 = 0
  // backward: the clamps' gradients pass on the closed range, exactly 0 outside it and for NaN
  // inputs, whatever dy (a selection: dy = inf gives 0 there, not NaN)
  CHECK(cuda::std::get<0>(grad(inf, 8.0, 0.5)) == 0.0);
  CHECK(cuda::std::get<1>(grad(inf, 0.5, 8.0)) == 0.0);
  CHECK(cuda::std::get<1>(grad(inf, 0.5, -8.0)) == 0.0);
  CHECK(cuda::std::get<0>(grad(1.0, NAN, 0.5)) == 0.0);
  CHECK(std::isnan(cuda::std::get<1>(grad(1.0, NAN, 0.5))));  // silu_alpha(NaN) passed on
  CHECK(cuda::std::get<1>(grad(1.0, 0.5, NAN)) == 0.0);
  CHECK(std::isnan(cuda::std::get<0>(grad(1.0, 0.5, NAN))));  // clamp(NaN) + 1 passed on
  const double s7 = 1 / (1 + std::exp(-1.702 * 7.0));
  const auto at_limit = grad(1.0, 7.0, 7.0);  // both bounds inside the range
  CHECK(std::fabs(cuda::std::get<0>(at_limit) - 8 * s7 * (1 + 1.702 * 7 * (1 - s7))) < 1e-12);
  CHECK(std::fabs(cuda::std::get<1>(at_limit) - 7 * s7) < 1e-12);
  CHECK(std::fabs(cuda::std::get<1>(grad(1.0, 0.5, -7.0)) - g(0.5, 0.0)) < 1e-15);
  // partial_a / partial_b: the gradient at dy = 1
  CHECK(g.partial_a(0.25, 2.0) == cuda::std::get<0>(grad(1.0, 0.25, 2.0)));
  CHECK(g.partial_b(0.25, 2.0) == cuda::std::get<1>(grad(1.0, 0.25, 2.0)));
  // a huge negative a: alpha a overflows float, silu_alpha and its derivative stay -0 and 0
  const auto huge = cuact::gate_gradient<cuact::rounded_to<float>>(g, 1.0f, -3e38f, 0.5f);
  CHECK(cuda::std::get<0>(huge) == 0.0f);
  CHECK(g(-3e38f, 0.5f) == 0.0f);
}

TEMPLATE_TEST_CASE("gate: a user's gate with partial derivatives only", "[cpu][gate]", float,
                   double, __nv_bfloat16) {
  using T = TestType;
  using C = compute_t<T>;
  const cuact::gate_op<scaled_product, T> forward{{}, {1.5}};
  const cuact::gate_gradient_op<scaled_product, T> backward{{}, {1.5}};
  constexpr std::size_t n = 1 << 12;
  const auto a = hashed<T>(21, n), b = hashed<T>(22, n), dy = hashed<T>(23, n);
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double ad = to_double(a[i]), bd = to_double(b[i]), dyd = to_double(dy[i]);
    const C ac = to_compute(a[i]), bc = to_compute(b[i]), dyc = to_compute(dy[i]);
    const double k = in_compute<T>(1.5);
    bad += !close_to(from_compute<T>(forward(ac, bc)), in_compute<T>(k * ad) * bd, 1.5);
    const auto [da, db] = backward(ac, bc, dyc);
    bad += !close_to(from_compute<T>(da), dyd * in_compute<T>(k * bd), 1.5);
    bad += !close_to(from_compute<T>(db), dyd * in_compute<T>(k * ad), 1.5);
  }
  CHECK(bad == 0);
}

TEST_CASE("gate: activation_gate is act(a) * b with the GLU backward", "[cpu][gate]") {
  const cuact::activation_gate<cuact::relu> reglu{};
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(reglu(2.0, 3.0) == 6.0);
  CHECK(reglu(-2.0, 3.0) == 0.0);
  // relu's selection: a <= 0 gives da = 0 for an infinite upstream dy * b
  CHECK(cuda::std::get<0>(reglu.gradient(inf, -1.0, 1.0)) == 0.0);
  CHECK(cuda::std::get<0>(reglu.gradient(2.0, 1.0, 3.0)) == 6.0);
  CHECK(cuda::std::get<1>(reglu.gradient(2.0, 1.5, 3.0)) == 3.0);
  const cuact::activation_gate<cuact::silu> swiglu{};
  for (double x = -8; x <= 8; x += 0.25) {
    CHECK(swiglu(x, 0.75) == cuact::silu{}(x)*0.75);
    CHECK(cuda::std::get<0>(swiglu.gradient(2.0, x, 0.75)) == 1.5 * cuact::silu{}.derivative(x));
  }
}

TEMPLATE_TEST_CASE("gate: packed clamped SwiGLU rows under simulated grids", "[cpu][gate]", float,
                   __nv_bfloat16) {
  using T = TestType;
  constexpr int V = cuact::detail::resolve_width<cuact::auto_width, sizeof(T)>();
  const cuact::gate_op<cuact::clamped_swiglu, T> op{{}, {}};
  for (std::size_t rows : {1, 3}) {
    for (std::size_t cols : {1, 7, 8, 9, 16, 33}) {
      for (const cuact::gate_half half : {cuact::gate_half::first, cuact::gate_half::second}) {
        CAPTURE(rows, cols, half == cuact::gate_half::first);
        std::vector<T> ab(rows * 2 * cols), out(rows * cols, from_bits<T>(0x7f));
        for (std::size_t i = 0; i < ab.size(); ++i) ab[i] = hash_value<T>(31, i);
        const std::size_t a_at = half == cuact::gate_half::first ? 0 : cols, b_at = cols - a_at;
        const auto p = cuact::detail::make_rows_params<V>(
            op, cuact::outputs(out.data()), {cols}, rows, cols,
            cuact::inputs<T, T>(ab.data() + a_at, ab.data() + b_at), {2 * cols, 2 * cols});
        REQUIRE(p.row.head + p.row.vectors * V + p.row.tail == cols);
        for (std::size_t r = 0; r < rows; ++r) {
          for (std::size_t t = 0; t < 4; ++t) cuact::detail::rows_thread(p, r, rows, t, 4);
        }
        for (std::size_t r = 0; r < rows; ++r) {
          for (std::size_t c = 0; c < cols; ++c) {
            const T* row = ab.data() + r * 2 * cols;
            const T want =
                from_compute<T>(op(to_compute(row[a_at + c]), to_compute(row[b_at + c])));
            REQUIRE(same_result(out[r * cols + c], want));
          }
        }
      }
    }
  }
}
